"""A scripted language server for March's LSP tests. Usage: fake_server.py MODE

Modes: push (publishes diagnostics; first asks the client workspace/configuration and
window/workDoneProgress/create and publishes nothing until both are answered), pull (only
answers textDocument/diagnostic), garbage (push, with stray stdout lines and an oversized
message before each real one), crash (push; exits when the text contains CRASH), silent
(never answers anything), fail-start (exits at once with a message on stderr), noisy (pull,
after 8 MiB of stderr without a newline).
Every line containing BAD is an error on that line."""
import json
import sys

mode = sys.argv[1]
out = sys.stdout.buffer
inp = sys.stdin.buffer

if mode == "noisy":
    # 8 MiB on stderr without a newline, then the pull behaviour.
    sys.stderr.write("x" * (8 << 20))
    sys.stderr.flush()
    mode = "pull"

if mode == "fail-start":
    sys.stderr.write("error: this server cannot start here\n")
    sys.exit(1)


def send(msg):
    body = json.dumps(msg).encode()
    if mode == "garbage":
        out.write(b"DEBUG: about to send something\n")
        huge = b" " * (33 * 1024 * 1024)
        out.write(b"Content-Length: %d\r\n\r\n" % len(huge) + huge)
        out.write(b"Content-Length: 9\r\n\r\nnot json!")
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


def recv():
    length = None
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        k, v = line.decode().split(":", 1)
        if k.lower() == "content-length":
            length = int(v)
    return json.loads(inp.read(length))


def items(text):
    found = []
    for n, line in enumerate(text.split("\n")):
        col = line.find("BAD")
        if col >= 0:
            found.append({
                "range": {"start": {"line": n, "character": col},
                          "end": {"line": n, "character": col + 3}},
                "severity": 1, "source": "fake", "code": "B001",
                "message": "BAD is not allowed here",
            })
    return found


texts = {}
asked = {}  # id -> what for
ready = mode not in ("push", "garbage", "crash")
waiting = []  # uris to publish once ready
next_id = 1000


def publish(uri):
    send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
          "params": {"uri": uri, "diagnostics": items(texts[uri])}})


while True:
    msg = recv()
    if mode == "silent":
        continue
    method = msg.get("method")
    if method is None:
        # An answer to one of our requests.
        asked.pop(msg.get("id"), None)
        if not asked and not ready:
            ready = True
            for uri in waiting:
                publish(uri)
            waiting = []
        continue
    params = msg.get("params") or {}
    if method == "initialize":
        caps = {"textDocumentSync": 1}
        if mode == "pull":
            caps["diagnosticProvider"] = {"interFileDependencies": False, "workspaceDiagnostics": False}
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": caps}})
    elif method == "initialized":
        if not ready:
            for what in ("workspace/configuration", "window/workDoneProgress/create"):
                next_id += 1
                asked[next_id] = what
                p = {"items": [{"section": "fake"}, {"section": "fake.more"}]} if what == "workspace/configuration" else {"token": "t1"}
                send({"jsonrpc": "2.0", "id": next_id, "method": what, "params": p})
    elif method in ("textDocument/didOpen", "textDocument/didChange"):
        doc = params["textDocument"]
        text = doc["text"] if method == "textDocument/didOpen" else params["contentChanges"][-1]["text"]
        texts[doc["uri"]] = text
        if mode == "crash" and "CRASH" in text:
            sys.stderr.write("fatal: boom\n")
            sys.stderr.flush()
            sys.exit(3)
        if mode != "pull":
            if ready:
                publish(doc["uri"])
            else:
                waiting.append(doc["uri"])
    elif method == "textDocument/diagnostic":
        uri = params["textDocument"]["uri"]
        send({"jsonrpc": "2.0", "id": msg["id"],
              "result": {"kind": "full", "items": items(texts.get(uri, ""))}})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
    elif method == "exit":
        sys.exit(0)
    elif "id" in msg:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}})
