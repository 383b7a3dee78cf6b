from __future__ import annotations
import asyncio, json
import pytest
from aiohttp import web
from robots_async.cli import main

def app(routes):
    a = web.Application()
    for path, h in routes.items():
        a.router.add_get(path, h)
    return a

async def test_big(serve, capsys):
    big = json.dumps([{"location": f"/p{i}", "tdm-reservation": 1} for i in range(20000)]).encode()
    print(len(big))
    async def h(r): return web.Response(body=big, content_type="application/json")
    base = await serve(app({"/.well-known/tdmrep.json": h}))
    code = await asyncio.to_thread(main, ["lint", "--tdmrep", base])
    out = capsys.readouterr()
    print("BIG", code, out.out[-300:], out.err[-300:])

async def test_redirect(serve, capsys):
    async def h(r): raise web.HTTPFound("/x.json")
    async def x(r): return web.Response(body=b'[{"location":"/","tdm-reservation":1}]', content_type="application/json")
    base = await serve(app({"/.well-known/tdmrep.json": h, "/x.json": x}))
    code = await asyncio.to_thread(main, ["lint", "--tdmrep", "--json", base])
    out = capsys.readouterr()
    print("REDIR", code, out.out[-300:], out.err[-300:])

@pytest.mark.parametrize("status", [401, 403, 429, 301, 204])
async def test_status(serve, capsys, status):
    async def h(r): return web.Response(status=status, body=b"" if status in (204,) else b"[]")
    base = await serve(app({"/.well-known/tdmrep.json": h}))
    code = await asyncio.to_thread(main, ["lint", "--tdmrep", base])
    out = capsys.readouterr()
    print("STATUS", status, code, out.out[-300:], out.err[-300:])

async def test_html(serve, capsys):
    async def h(r): return web.Response(body=b"<html>hi</html>", content_type="text/html")
    base = await serve(app({"/.well-known/tdmrep.json": h}))
    code = await asyncio.to_thread(main, ["lint", "--tdmrep", base])
    out = capsys.readouterr()
    print("HTML", code, out.out[-300:], out.err[-300:])

def test_dir(tmp_path, capsys):
    d = tmp_path / "tdmrep.json"; d.mkdir()
    code = main(["lint", str(d)])
    out = capsys.readouterr()
    print("DIR", code, out.out[-300:], out.err[-300:])

def test_stdin(monkeypatch, capsys):
    import io, sys
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'[{"location":"/","tdm-reservation":1}]')))
    code = main(["lint", "--tdmrep", "-"])
    out = capsys.readouterr()
    print("STDIN", code, out.out[-300:], out.err[-300:])

def test_maxbytes(tmp_path, capsys):
    p = tmp_path / "t.json"; p.write_bytes(b'[{"location":"/","tdm-reservation":1}]')
    code = main(["lint", "--tdmrep", "--max-bytes", "5", str(p)])
    out = capsys.readouterr()
    print("MAXB", code, out.out[-300:], out.err[-300:])
