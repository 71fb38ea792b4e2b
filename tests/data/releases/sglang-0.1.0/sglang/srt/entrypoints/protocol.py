# ruff: noqa
from pydantic import BaseModel, field_validator


class ChatRequest(BaseModel):
    temperature: float = 1.0

    @field_validator("temperature")
    @classmethod
    def check_temperature(cls, value):
        if value < 0:
            raise ValueError(f"temperature must be non-negative, got {value}")
        return value
