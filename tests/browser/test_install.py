"""Install and offline (issue 31, point 7), in Chromium with a persistent profile.

One walk, as a person would take it: the page is loaded once from the server; the web app
manifest is valid (Chromium reports no installability error, every icon decodes at its
declared size) and the service worker caches the build's precache list; the app is installed.
Then the server is stopped and the browser set offline: a reload boots from the service
worker alone (every response from it, the workers, ONNX Runtime and the model included),
opens the palace from OPFS and a search finds the drawer added before; a palace file opened
with the installed app (Chromium's File Handling, through DevTools' PWA.launchFilesInApp)
lands in the import dialog and is imported. Last, the site is rebuilt with a changed page
(the build's own precache step, :func:`sitebuild.offline.write`, on a copy of ``dist/``) and
served again: the new version installs beside the old, copying the unchanged files, the page
offers it, and after "Reload now" it serves the new page from a new cache, the old deleted.

The page registers the service worker only where ``navigator.webdriver`` is false (see
web/offline.js), so this test presents itself as a person's browser.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

from .conftest import CHROMIUM_ARGS, SITE, Guard, chromium_path

BOOT_TIMEOUT_MS = 240_000
NOT_AUTOMATED = ("Object.defineProperty(Navigator.prototype, 'webdriver',"
                 " {get: () => false, configurable: true});")
NOTE = "The lighthouse keeper logs the fog horn hours in a green ledger."
CACHES = """async () => {
  const out = {};
  for (const name of await caches.keys()) {
    out[name] = (await (await caches.open(name)).keys()).length;
  }
  return out;
}"""
RECORD = """async (name) =>
  (await (await caches.open(name)).match('__palazzo-precache__')).json()"""
ICON_SIZES = """async (icons) => Promise.all(icons.map(async (icon) => {
  const response = await fetch(icon.src);
  const image = new Image();
  image.src = URL.createObjectURL(await response.blob());
  await image.decode();
  return [response.status, response.headers.get('content-type'), image.naturalWidth,
          image.naturalHeight];
}))"""


def _copy_site(dest: Path) -> Path:
    """A copy of the built site to rebuild: hard links where the file system allows."""
    def link(src, dst):
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
    shutil.copytree(SITE, dest, copy_function=link)
    return dest


def _rewrite(path: Path, text: str) -> None:
    path.unlink()  # never through a hard link into dist/
    path.write_text(text, encoding="utf-8")


def _rebuild(site: Path) -> dict:
    """The site with a changed page, its precache list made again as the build makes it."""
    from sitebuild import offline

    index = site / "index.html"
    _rewrite(index, index.read_text().replace("<title>palazzo</title>",
                                              "<title>palazzo</title><!-- build 2 -->"))
    _rewrite(site / offline.SW_NAME, (SITE.parents[0] / "web" / offline.SW_NAME).read_text())
    (site / offline.LIST_NAME).unlink()
    lock = json.loads((site / "vendor/pyodide/pyodide-lock.json").read_text())
    build = json.loads((site / "build.json").read_text())
    return offline.write(site, lock, build["packages"] + build["deferred_packages"]
                         + build["on_demand_packages"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(site: Path, port: int):
    from sitebuild.serve import make_server

    server = make_server(site, port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _stop(server) -> None:
    server.shutdown()
    server.server_close()


@pytest.mark.browser
def test_installs_opens_offline_opens_a_palace_file_and_takes_a_new_version(playwright, tmp_path):
    site = _copy_site(tmp_path / "site")
    listing = json.loads((site / "precache.json").read_text())
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    server = _serve(site, port)
    guard = Guard()
    context = playwright.chromium.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=chromium_path(), args=CHROMIUM_ARGS)
    try:
        context.add_init_script(NOT_AUTOMATED)
        context.route("**/*", guard.route)
        context.on("response", guard.response)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning")
                and "offline copy" in m.text else None)
        page.set_default_timeout(BOOT_TIMEOUT_MS)

        # 1. Online, once: the manifest, the offline copy, the app installed.
        page.goto(url)
        page.evaluate("window.palazzo.ready")
        cdp = context.new_cdp_session(page)
        app = cdp.send("Page.getAppManifest")
        assert app["url"] == url + "manifest.webmanifest" and app["errors"] == []
        manifest = json.loads(app["data"])
        assert manifest["name"] and manifest["short_name"] == "palazzo"
        assert manifest["start_url"] == manifest["scope"] == "./"
        assert manifest["display"] == "standalone"
        assert cdp.send("Page.getInstallabilityErrors")["installabilityErrors"] == []
        icons = [{**icon, "src": url + icon["src"]} for icon in manifest["icons"]]
        sizes = page.evaluate(ICON_SIZES, icons)
        for icon, (status, kind, width, height) in zip(icons, sizes, strict=True):
            assert status == 200 and kind == icon["type"], icon
            if icon["sizes"] != "any":
                assert f"{width}x{height}" == icon["sizes"], icon
        assert {i["sizes"] for i in icons if i["type"] == "image/png"} >= {"192x192", "512x512"}
        assert any(i["purpose"] == "maskable" for i in icons)
        (handler,) = manifest["file_handlers"]
        assert sorted(sum(handler["accept"].values(), [])) == [".json", ".zip"]

        page.evaluate("(content) => window.palazzo.call('add_drawer', "
                      "{wing: 'sea', room: 'lighthouse', content})", NOTE)
        palace_file = tmp_path / "lighthouse.json"
        palace_file.write_text(json.dumps(
            page.evaluate("window.palazzo.call('export', {vectors: 'none'})")["document"]))
        record = page.evaluate("window.palazzo.offline")
        online = page.evaluate("window.palazzo.timings")
        assert record["version"] == listing["version"]
        assert record["files"] == len(listing["precache"]) == record["downloaded"]
        assert record["bytes"] == listing["precache_bytes"]
        # One cache: every precached file and the cache's record.
        assert page.evaluate(CACHES) == {f"palazzo-{listing['version']}": record["files"] + 1}
        usage = page.evaluate("navigator.storage.estimate()")["usageDetails"]["caches"]
        print(f"\nprecache: {record['files']} files, {record['bytes'] / 1e6:.1f} MB, installed "
              f"in {record['seconds']:.2f} s; Cache Storage {usage / 1e6:.1f} MB")
        cdp.send("PWA.install", {"manifestId": url})
        assert cdp.send("PWA.getOsAppState", {"manifestId": url})["fileHandlers"]

        # 2. No server, no network: the page boots from the service worker alone.
        _stop(server)
        context.set_offline(True)
        served = []
        context.on("response", lambda r: served.append((r.url, r.from_service_worker)))
        page.reload()
        page.evaluate("window.palazzo.rendered")
        page.evaluate("window.palazzo.deferred")  # SciPy, ONNX Runtime and MiniLM: cached too
        offline = page.evaluate("window.palazzo.timings")
        print("boot, first visit from the server / offline from the service worker: "
              + ", ".join(f"{stage} {online[key] / 1000:.1f} / {offline[key] / 1000:.1f} s"
                          for stage, key in (("rendered", "document:done"),
                                             ("embedder in", "deferred:done"))))
        status = page.evaluate("window.palazzo.call('palace_status')")
        assert status["embedder"]["runtime"].startswith("ONNX Runtime")
        hits = page.evaluate("window.palazzo.call('search', {query: 'fog horn ledger', limit: 3})")
        assert hits["results"][0]["content"] == NOTE
        assert page.evaluate("crossOriginIsolated")  # COOP/COEP kept in the cached responses
        local = [(u, sw) for u, sw in served if u.startswith(url)]
        assert [u for u, sw in local if not sw] == []
        for needed in ("workers/palace.worker.js", "workers/embed.worker.js",
                       "vendor/pyodide/pyodide.asm.wasm", "vendor/ort/ort-wasm-simd-threaded.wasm",
                       "vendor/models/minilm/minilm.onnx"):
            assert url + needed in {u for u, _ in local}, needed

        # 3. A palace file opened with the installed app goes to the import dialog.
        cdp.send("PWA.launchFilesInApp", {"manifestId": url, "files": [str(palace_file)]})
        page.wait_for_function("document.getElementById('import-dialog').dataset.state === 'found'")
        assert page.locator("#import-status").inner_text().startswith("Found")
        page.locator("#import-name").fill("From the file")
        page.locator("#import-go").click()
        page.wait_for_function("document.getElementById('import-dialog').dataset.state === 'done'")
        page.locator("#import-close").click()
        assert page.evaluate("window.palazzo.call('palace_status')")["name"] == "From the file"
        hits = page.evaluate("window.palazzo.call('search', {query: 'fog horn ledger', limit: 3})")
        assert hits["results"][0]["content"] == NOTE

        # 4. A rebuild with changed content: the new version installs, and takes over when asked.
        rebuilt = _rebuild(site)
        assert rebuilt["version"] != listing["version"]
        server = _serve(site, port)
        context.set_offline(False)
        page.evaluate("navigator.serviceWorker.getRegistration().then((r) => r.update())")
        page.locator("#update-ready").wait_for(state="visible")
        with page.expect_navigation():
            page.locator("#update-reload").click()
        assert "<!-- build 2 -->" in page.content()
        new = page.evaluate(RECORD, f"palazzo-{rebuilt['version']}")
        # Only the changed page was downloaded; the rest was copied from the old cache.
        assert new["downloaded"] == 1 and new["copied"] == new["files"] - 1
        assert page.evaluate(CACHES) == {f"palazzo-{rebuilt['version']}": new["files"] + 1}
        print(f"update: {new['downloaded']} file downloaded, {new['copied']} copied, "
              f"{new['seconds']:.2f} s")
        assert errors == []
    finally:
        context.close()
        _stop(server)
    assert guard.outside == [] and guard.failed == []
