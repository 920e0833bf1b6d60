"""The venv's Jupyter server sends each kernel message at once (controls/server.py): its
config names NoDelayConnection, and that connection turns Nagle's algorithm off before it
connects. What it saves a reader is measured by benchmarks/lab_latency.py."""

import pytest
from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection
from jupyter_server.services.kernels.websocket import KernelWebsocketHandler

from attention_book.controls.server import NoDelayConnection


@pytest.mark.slow  # jupyter_server.serverapp takes 2 s to import
def test_the_venvs_server_config_names_the_connection():
    from jupyter_server.serverapp import ServerApp

    app = ServerApp()
    app.load_config_file()  # the venv's etc/jupyter/jupyter_server_config.json (make env)
    assert app.kernel_websocket_connection_class is NoDelayConnection, "run make env"


def test_the_connection_sets_no_delay_before_it_connects(monkeypatch):
    calls = []
    handler = KernelWebsocketHandler.__new__(KernelWebsocketHandler)  # no request needed
    handler.set_nodelay = lambda value: calls.append(("nodelay", value))
    monkeypatch.setattr(ZMQChannelsWebsocketConnection, "connect",
                        lambda self: calls.append(("connect",)) or "connected")
    connection = NoDelayConnection(websocket_handler=handler)
    assert connection.connect() == "connected"
    assert calls == [("nodelay", True), ("connect",)]
