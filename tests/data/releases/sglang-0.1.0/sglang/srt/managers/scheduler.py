# ruff: noqa
import logging

from sglang.srt import envs

logger = logging.getLogger(__name__)


class SchedulerError(RuntimeError):
    pass


class Scheduler:
    def run_batch(self, batch, server_args):
        if batch.size > server_args.max_running_requests:
            raise RuntimeError(
                "Batch of %d requests exceeds the limit %d"
                % (batch.size, server_args.max_running_requests)
            )
        if not batch.reqs:
            raise SchedulerError(
                "Empty batch {} on scheduler {name}".format(batch.id, name=self.name)
            )
        if envs.SGLANG_ENABLE_FOO.get():
            raise NotImplementedError("Foo mode is not supported with the overlap scheduler")
        try:
            batch.run()
        except Exception as e:
            logger.error("Scheduler hit an exception: " + str(e))
            raise

    def event_loop(self):
        def step():
            raise RuntimeError

        return step
