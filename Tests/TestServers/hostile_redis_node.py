#!/usr/bin/env python3
"""A Redis node on 127.0.0.1 that answers reads with a reply nobody should buffer.

  hostile_redis_node.py flood
      Answers every GET and GETRANGE with the header of a 2,000,000,000-byte bulk
      string, then sends its bytes as fast as the socket takes them.

  hostile_redis_node.py drip
      Answers every GET and GETRANGE with the header of a 1,000,000-byte bulk
      string, then one byte every 5 ms; after 3 s it closes the connection.

Other commands get what redis-server would answer for a missing key (+OK, :0).
Prints its port on the first line of stdout; exits when stdin closes.
"""
import os
import socket
import sys
import threading
import time

CHUNK = b"x" * (1 << 20)


def read_command(stream):
    """The next command (a list of bytes), or None when the client went away."""
    header = stream.readline()
    if not header.startswith(b"*"):
        return None
    arguments = []
    for _ in range(int(header[1:])):
        length = int(stream.readline()[1:])
        arguments.append(stream.read(length + 2)[:-2])
    return arguments


def flood(conn):
    conn.sendall(b"$2000000000\r\n")
    left = 2_000_000_000
    while left > 0:
        conn.sendall(CHUNK[:left])
        left -= len(CHUNK)
    conn.sendall(b"\r\n")


def drip(conn):
    conn.sendall(b"$1000000\r\n")
    end = time.monotonic() + 3
    while time.monotonic() < end:
        conn.sendall(b"x")
        time.sleep(0.005)
    conn.shutdown(socket.SHUT_RDWR)


def serve_client(conn, answer_read):
    stream = conn.makefile("rb")
    try:
        while True:
            command = read_command(stream)
            if command is None:
                return
            name = command[0].upper()
            if name in (b"GET", b"GETRANGE"):
                answer_read(conn)
            elif name in (b"EXISTS", b"DEL"):
                conn.sendall(b":0\r\n")
            else:
                conn.sendall(b"+OK\r\n")
    except OSError:
        pass  # the client gave up on the reply: what it should do
    finally:
        conn.close()


def main(mode):
    answer_read = {"flood": flood, "drip": drip}[mode]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)

    def watch_stdin():
        while os.read(0, 4096):
            pass
        os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    print(listener.getsockname()[1], flush=True)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve_client, args=(conn, answer_read), daemon=True).start()


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("flood", "drip"):
        sys.exit(__doc__)
    main(sys.argv[1])
