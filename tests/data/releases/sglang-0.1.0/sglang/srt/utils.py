# ruff: noqa
import socket


def check_port(port):
    if not 0 < port < 65536:
        raise ValueError("Port " + str(port) + " is outside the valid range of ports")
    return socket.socket()
