"""The Jupyter server's side of the live labs: the kernel's websocket without Nagle's delay.

A lab's change is one comm message to the kernel and its answer back. The kernel publishes
the answer between its "busy" and "idle" status messages, and jupyter_server writes each
to the page's websocket as it comes. With Nagle's algorithm on (tornado's default for a
websocket), the answer, written just after "busy", waited for the page to acknowledge
"busy", which the page's TCP delays up to 40 ms: chapter 10's step slider answered in
52 ms median from key to answer, 22 ms with the delay off (benchmarks/README.md). The
venv's ``etc/jupyter/jupyter_server_config.json`` (written by ``make env``) names
:class:`NoDelayConnection` for ``make lab``, ``make notebook`` and the tests' JupyterLab.
"""

from __future__ import annotations

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

__all__ = ["NoDelayConnection"]


class NoDelayConnection(ZMQChannelsWebsocketConnection):
    """jupyter_server's kernel websocket connection, each message sent at once
    (``TCP_NODELAY``, tornado's ``WebSocketHandler.set_nodelay``)."""

    def connect(self):
        self.websocket_handler.set_nodelay(True)
        return super().connect()
