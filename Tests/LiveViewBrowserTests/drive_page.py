#!/usr/bin/env python3
"""Drives the live view page (capture -r FILE --ui) in headless chromium through selenium and checks what it
shows against independent oracles: `capture -r FILE --http --json` for the rows, `--har FILE` for the HAR
download, the capture's own bytes for the JSON tree and the image preview, `capture --status 4xx` for the filter
at scale. Run by LiveViewBrowserTests (Swift); prints one JSON object per check, then {"done": true}.

  drive_page.py --capture BIN --fixtures DIR --work DIR --screenshots DIR --generator SCRIPT
"""
import argparse
import base64
import datetime
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

SCALE = 100_000
NOBODY = 65534
started = time.monotonic()


def report(name, ok, detail="", skipped=False):
    print(json.dumps({"check": name, "ok": bool(ok), "detail": str(detail)[:2000], "skipped": skipped,
                      "at": round(time.monotonic() - started, 2)}), flush=True)


class LiveView:
    """`capture -r FILE --ui 127.0.0.1:0`, its URL read from the line it prints."""

    def __init__(self, capture, pcap, *extra, arguments=None, environment=None, plain_user=False):
        self.live = arguments is not None
        arguments = arguments if self.live else ["-r", pcap, "--ui", "127.0.0.1:0", *extra]
        # Reading a file needs no privilege: run as root, the view of a file is also served by a plain user.
        user = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if plain_user and os.geteuid() == 0 else []
        self.user = "a plain user (uid 65534)" if user else f"uid {os.geteuid()}"
        self.process = subprocess.Popen([*user, capture, *arguments], env=environment,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.url = None
        self.lines = []
        found = threading.Event()

        def read():
            for line in self.process.stderr:
                self.lines.append(line)
                match = re.search(r"(http://\S+/\?token=[0-9a-f]+)", line)
                if match and self.url is None:
                    self.url = match.group(1)
                    found.set()
            found.set()
        threading.Thread(target=read, daemon=True).start()
        if not found.wait(60) or self.url is None:
            self.stop()
            raise RuntimeError(f"capture --ui printed no URL: {''.join(self.lines)[-1000:]}")

    def stop(self):
        # A view of a file has nothing left to write: SIGKILL. A sandboxed command's view is stopped as a user
        # stops it, with Ctrl-C (SIGINT), so it removes the sandbox and restores the conditioner; SIGKILL only if
        # that does not end it.
        if self.process.poll() is None:
            if self.live:
                self.process.send_signal(signal.SIGINT)
                try:
                    self.process.wait(8)
                    return
                except subprocess.TimeoutExpired:
                    pass
            self.process.kill()
            self.process.wait(5)


def oracle(capture, pcap, *extra):
    out = subprocess.run([capture, "-r", pcap, "--http", "--json", *extra], capture_output=True, timeout=120).stdout
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def exchanges(records):
    return [r for r in records if "tls" not in r and "quic" not in r and "type" not in r]


def har_bodies(capture, pcap, work, *extra):
    path = os.path.join(work, os.path.basename(pcap) + ".har")
    subprocess.run([capture, "-r", pcap, "--http", "--har", path, *extra], capture_output=True, timeout=120, check=True)
    bodies = []
    with open(path, "rb") as f:
        raw = f.read()
    for entry in json.loads(raw)["log"]["entries"]:
        content = entry["response"]["content"]
        text = content.get("text", "")
        bodies.append(base64.b64decode(text) if content.get("encoding") == "base64" else text.encode())
    return raw, bodies


# The page's own formats (format.js), written again here from docs: what a reader of the list should see.
def clock(ts):
    t = datetime.datetime.fromtimestamp(ts)
    return t.strftime("%H:%M:%S.") + f"{int(ts * 1000) % 1000:03d}"


def size_text(n):
    if n is None:
        return ""
    if n < 1000:
        return f"{n} B"
    value, units = n / 1000, ["KB", "MB", "GB", "TB"]
    unit = 0
    while value >= 1000 and unit < 3:
        value /= 1000
        unit += 1
    return f"{value:.1f} {units[unit]}"


def header(headers, name):
    for k, v in headers or []:
        if k.lower() == name.lower():
            return v
    return None


def expected_row(record, tls_connections):
    request, response = record.get("request"), record.get("response")
    host = header((request or {}).get("headers"), "host") or header((request or {}).get("headers"), ":authority") \
        or record["server"]
    if response is None:
        status = "no response"
    elif response.get("status_text"):
        status = response["status_text"]
    elif isinstance(response.get("status"), int):
        status = str(response["status"])
    else:
        status = "(no status line)" if response.get("version") == "HTTP/0.9" else "(no status code)"
    version = (request or response or {}).get("version", "")
    protocol = "h2" if "http2" in record else "h3" if "http3" in record else version.lower()
    if (record["client"], record["server"]) in tls_connections:
        protocol += " TLS"
    return {"time": clock(record["ts"]), "method": (request or {}).get("method", ""), "host": host,
            "path": (request or {}).get("uri", ""), "status": status, "protocol": protocol,
            "size": size_text(((response or {}).get("body") or {}).get("size"))}


def browser(downloads):
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--window-size=1400,900", "--disable-gpu",
                     f"--user-data-dir={os.path.join(downloads, 'profile')}"]:
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"download.default_directory": downloads,
                                              "download.prompt_for_download": False})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait_for(driver, condition, seconds=10):
    # The page rebuilds panels as state comes in: an element looked up a moment ago may be gone.
    return WebDriverWait(driver, seconds, poll_frequency=0.05,
                         ignored_exceptions=[StaleElementReferenceException]).until(lambda d: condition(d))


def total(driver):
    return int(driver.find_element(By.ID, "counts").get_attribute("data-total") or -1)


def shown(driver):
    return int(driver.find_element(By.ID, "counts").get_attribute("data-shown") or -1)


def open_page(driver, url, count, seconds=15):
    driver.get(url)
    wait_for(driver, lambda d: total(d) == count, seconds)


def rendered_rows(driver):
    return driver.execute_script("""
        return [...document.querySelectorAll('#spacer .row:not([hidden])')]
          .sort((a, b) => a.dataset.index - b.dataset.index)
          .map((row) => ({index: Number(row.dataset.index), id: Number(row.dataset.id),
                          cells: [...row.children].map((c) => c.textContent)}));""")


FIELDS = ["time", "method", "host", "path", "status", "protocol", "size"]


def leave(driver, view):
    """Off the page before its server stops, so the page's reconnecting is not logged as an error."""
    driver.get("about:blank")
    view.stop()


def check_rows(driver, name, records, user=""):
    tls = {(r["client"], r["server"]) for r in records if "tls" in r}
    expected = [expected_row(r, tls) for r in exchanges(records)]
    got = [dict(zip(FIELDS, row["cells"])) for row in rendered_rows(driver)]
    problems = [f"row {i}: page {g} != oracle {e}" for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    if len(got) != len(expected):
        problems.append(f"{len(got)} rows shown, {len(expected)} exchanges in --json")
    report(f"list {name}", not problems, "; ".join(problems) or f"{len(expected)} rows equal --json (capture run as {user})")


def filter_count(driver, text):
    driver.execute_script("""const box = document.getElementById('filter');
        box.value = arguments[0]; box.dispatchEvent(new Event('input'));""", text)
    time.sleep(0.15)
    return wait_for(driver, lambda d: d.execute_script(
        "return document.getElementById('counts').dataset.filter === arguments[0] ? Number(document.getElementById('counts').dataset.shown) : false",
        text), 5)


def check_filters(driver, records):
    rows = exchanges(records)

    def count(test):
        return sum(1 for r in rows if test(r))

    def status(r):
        return (r.get("response") or {}).get("status")

    def mime(r):
        value = header((r.get("response") or {}).get("headers"), "content-type") or ""
        return value.split(";")[0].strip().lower()

    cases = {
        "status:4xx": count(lambda r: isinstance(status(r), int) and 400 <= status(r) < 500),
        "-status:4xx": count(lambda r: not (isinstance(status(r), int) and 400 <= status(r) < 500)),
        "method:POST": count(lambda r: (r.get("request") or {}).get("method") == "POST"),
        "type:json": count(lambda r: mime(r) == "application/json" or mime(r).endswith("+json")),
        "host:shop.*": count(lambda r: re.fullmatch(r"shop\..*", header(r["request"]["headers"], "host") or "") is not None),
        "path:*.js": count(lambda r: r["request"]["uri"].split("?")[0].endswith(".js")),
        "favicon": count(lambda r: "favicon" in r["request"]["uri"]),
        "method:GET -status:200": count(lambda r: r["request"]["method"] == "GET" and status(r) != 200),
    }
    problems = []
    for text, want in cases.items():
        got = filter_count(driver, text)
        if got != want:
            problems.append(f"{text!r}: page shows {got}, oracle {want}")
    filter_count(driver, "")
    report("filter", not problems, "; ".join(problems) or f"{len(cases)} filters agree with --json")


def check_curl(driver, records, work):
    """Copy as curl for the POST: the command, run by a shell with curl replaced by a script that prints its
    arguments, gives back the method, URL, headers and body (a text body, so by --data-raw) that were captured."""
    index = next(i for i, r in enumerate(exchanges(records)) if r["request"]["method"] == "POST")
    record = exchanges(records)[index]
    select_row(driver, index, "headers")
    driver.find_element(By.CSS_SELECTOR, "#tab-body button.copy-curl").click()
    command = wait_for(driver, lambda d: d.find_element(By.ID, "curl-text").get_attribute("value"), 5)
    driver.find_element(By.CSS_SELECTOR, "#curl-dialog button[value=close]").click()
    fake = os.path.join(work, "bin")
    os.makedirs(fake, exist_ok=True)
    with open(os.path.join(fake, "curl"), "w") as f:
        f.write("#!/usr/bin/env python3\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    os.chmod(os.path.join(fake, "curl"), 0o755)
    out = subprocess.run(["sh", "-c", command], capture_output=True, timeout=10,
                         env={**os.environ, "PATH": fake + ":" + os.environ["PATH"]}).stdout
    try:
        argv = json.loads(out)
    except ValueError:
        report("copy as curl", False, f"{command!r} did not run: {out!r}")
        return
    host = header(record["request"]["headers"], "host")
    want_headers = [f"{k}: {v}" for k, v in record["request"]["headers"] if k.lower() not in ("host", "content-length")]
    # "Name:" turns off a field curl would add on its own (the capture had none): not a field sent.
    got_headers = [argv[i + 1] for i, a in enumerate(argv) if a == "-H" and not argv[i + 1].endswith(":")]
    body = argv[argv.index("--data-raw") + 1] if "--data-raw" in argv else None
    problems = []
    if argv[0] != f"http://{host}{record['request']['uri']}":
        problems.append(f"URL {argv[0]}")
    if argv[argv.index("-X") + 1] != "POST":
        problems.append("method")
    if got_headers != want_headers:
        problems.append(f"headers {got_headers} != {want_headers}")
    if body is None or hashlib.sha256(body.encode()).hexdigest() != record["request"]["body"]["sha256"]:
        problems.append(f"body {body!r} is not the captured one")
    report("copy as curl", not problems, "; ".join(problems) or command)


def check_pause_clear(driver, count):
    """Clear empties the list (and the detail pane); Pause is a toggle that says so."""
    pause = driver.find_element(By.ID, "pause")
    pause.click()
    paused = pause.get_attribute("aria-pressed") == "true" and "paused" in driver.find_element(By.ID, "status").text
    pause.click()
    driver.find_element(By.ID, "clear").click()
    cleared = total(driver) == 0 and not rendered_rows(driver) and not driver.find_element(By.ID, "detail").is_displayed()
    report("pause and clear", paused and cleared and pause.get_attribute("aria-pressed") == "false",
           f"paused shown: {paused}, cleared: {cleared} (was {count})")


def select_row(driver, index, tab):
    driver.find_element(By.CSS_SELECTOR, f'#spacer .row[data-index="{index}"]').click()
    driver.find_element(By.CSS_SELECTOR, f'#tabs button[data-tab="{tab}"]').click()


def tree_keys(driver):
    """Top-level keys and values of the JSON tree, as shown."""
    return driver.execute_script("""
        const root = document.querySelector('#tab-body .json-tree > .json-node > details > .json-children');
        if (!root) return null;
        return [...root.children].map((node) => {
          const key = node.querySelector('.json-key');
          return [key ? JSON.parse(key.textContent) : null, node.querySelector('.json-summary, .json-string, .json-number, .json-literal').textContent];
        });""")


def check_json_tree(driver, body):
    select_row(driver, 0, "response")
    try:
        wait_for(driver, lambda d: tree_keys(d) is not None, 5)
    except TimeoutException:
        report("json tree", False, "no JSON tree for the first response")
        return
    document = json.loads(body, object_pairs_hook=list)
    want = []
    for key, value in document:
        if isinstance(value, list) and value and isinstance(value[0], tuple):
            want.append([key, f"{{…}} {len(value)} keys"])
        elif isinstance(value, list):
            want.append([key, f"[…] {len(value)} items"])
        else:
            want.append([key, json.dumps(value)])
    got = tree_keys(driver)
    report("json tree", got == want, f"page {got} / body {want}")


def check_quic(driver, capture, fixtures, views):
    """HTTP/3 with its key log (h3-resume: a full handshake, then a resumed one with 0-RTT): the rows equal --json's,
    and the Connection tab of the resumed connection's last exchange shows its `quic` record: version, SNI,
    resumption, 0-RTT and each side's transport parameters, as --json has them."""
    pcap = os.path.join(fixtures, "quic", "h3-resume.pcap")
    keys = ["--keylog", os.path.join(fixtures, "quic", "h3-resume.keys")]
    records = oracle(capture, pcap, *keys)
    view = LiveView(capture, pcap, *keys)
    views.append(view)
    rows = exchanges(records)
    open_page(driver, view.url, len(rows))
    check_rows(driver, "h3-resume (h3)", records, view.user)
    last = rows[-1]
    want = [r["quic"] for r in records if "quic" in r and (r["client"], r["server"]) == (last["client"], last["server"])]
    if not want:
        report("quic facts", False, "--json printed no quic record for the last exchange's connection")
        return
    want = want[0]
    select_row(driver, len(rows) - 1, "connection")
    text = driver.find_element(By.ID, "tab-body").text
    lines = [f"Version {want['version']}", f"Server name (SNI) {want['server_name']}", "Resumption offered true",
             f"Resumed {str(want['resumed']).lower()}", f"0-RTT accepted {str(want['early_data_accepted']).lower()}",
             "Client transport parameters", "Server transport parameters",
             f"Client's first destination connection ID {want['connection_ids']['client_initial_dcid']}",
             f"Server's source connection ID {want['connection_ids']['server_scid']}"]
    lines += [f"{p['name']} {p['value']}" for side in ("client", "server") for p in want["transport_parameters"][side]
              if isinstance(p["value"], (int, str)) and not isinstance(p["value"], bool)]
    missing = [line for line in lines if line not in text]
    report("quic facts", want["resumed"] is True and want["early_data_accepted"] is True and not missing,
           f"missing {missing}" if missing else f"{len(lines)} facts shown as --json has them")
    leave(driver, view)


def check_websocket(driver, records):
    """The Messages tab of a WebSocket upgrade lists the connection's messages as --json has them: direction, kind,
    size and text (close code and reason for a close)."""
    upgrade = next(i for i, r in enumerate(exchanges(records)) if (r.get("response") or {}).get("status") == 101)
    record = exchanges(records)[upgrade]
    select_row(driver, upgrade, "messages")
    want = []
    for m in records:
        if m.get("type") != "websocket" or (m["client"], m["server"]) != (record["client"], record["server"]):
            continue
        if m["kind"] == "close":
            data = f"close {m['close_code'] if m['close_code'] is not None else '(no code)'} {m['close_reason'] or ''}".strip()
        elif m["text"] is None and m["kind"] == "binary":
            data = f"binary, sha256 {m['sha256']}"
        else:
            data = (m["text"] or "") + (" …" if m["text_is_partial"] else "")
        want.append(["↑" if m["from"] == "client" else "↓", m["kind"], f"{m['size']} B", data])
    try:
        wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#tab-body table.ws-messages tr.sent, #tab-body table.ws-messages tr.received"), 5)
    except TimeoutException:
        report("websocket messages", False, f"no messages listed; --json has {len(want)}")
        return
    got = driver.execute_script("""
        return [...document.querySelectorAll('#tab-body table.ws-messages tr.sent, #tab-body table.ws-messages tr.received')]
          .map((tr) => [...tr.children].map((td) => td.textContent))
          .map((cells) => [cells[0], cells[2], cells[3], cells[4]]);""")
    # Every column equals --json's, the data too: the server's record of a message is --json's (its text cut at the
    # same length, its hash given), whatever else the view's run keeps.
    problems = [f"message {i}: page {g} != --json {w}" for i, (g, w) in enumerate(zip(got, want)) if g != w]
    if len(got) != len(want):
        problems.append(f"{len(got)} messages listed, --json has {len(want)}")
    report("websocket messages", not problems, "; ".join(problems)[:1500] or
           f"{len(want)} messages, direction, kind, size and data equal --json")


def check_image(driver, body):
    select_row(driver, 0, "response")
    try:
        size = wait_for(driver, lambda d: d.execute_script("""
            const image = document.querySelector('#tab-body img.preview');
            return image && image.complete && image.naturalWidth > 0 ? [image.naturalWidth, image.naturalHeight, image.src] : false;"""), 5)
    except TimeoutException:
        report("image preview", False, "no image drawn")
        return
    width, height = int.from_bytes(body[16:20], "big"), int.from_bytes(body[20:24], "big")  # PNG IHDR
    report("image preview", size[0] == width and size[1] == height and size[2].startswith("blob:"),
           f"page {size[0]}x{size[1]} from {size[2][:5]}, PNG header {width}x{height}")


def check_har(driver, downloads, har):
    for name in os.listdir(downloads):
        if name.endswith(".har"):
            os.remove(os.path.join(downloads, name))
    driver.find_element(By.ID, "har").click()
    path = os.path.join(downloads, "capture.har")
    try:
        wait_for(driver, lambda d: os.path.exists(path) and os.path.getsize(path) == len(har), 10)
    except TimeoutException:
        pass
    got = open(path, "rb").read() if os.path.exists(path) else b""
    report("har download", got == har, f"{len(got)} bytes downloaded, --har wrote {len(har)}")


def check_markup(driver, url):
    """Nothing captured runs: not as source, not rendered in the frame, not in the JSON tree or the headers."""
    title = driver.title
    problems = []
    select_row(driver, 0, "response")
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#tab-body pre.html-source"), 5)
    source = driver.find_element(By.CSS_SELECTOR, "#tab-body pre.html-source").text
    if "<script>document.title = 'script ran'" not in source:
        problems.append("the HTML source is not shown as text")
    driver.find_element(By.CSS_SELECTOR, "#tab-body button.render").click()
    frame = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#tab-body iframe.html-frame"), 5)[0]
    if frame.get_attribute("sandbox") != "":
        problems.append(f"frame sandbox is {frame.get_attribute('sandbox')!r}")
    driver.switch_to.frame(frame)
    try:
        wait_for(driver, lambda d: d.find_elements(By.ID, "fixture-text"), 5)
        time.sleep(0.3)  # an onerror handler would have fired by now
        inside = driver.find_element(By.TAG_NAME, "title").get_attribute("textContent")
        if inside != "markup fixture":
            problems.append(f"the frame's title became {inside!r}: its script ran")
    finally:
        driver.switch_to.default_content()
    select_row(driver, 1, "response")
    wait_for(driver, lambda d: tree_keys(d) is not None, 5)
    keys = tree_keys(driver)
    if not keys or keys[0][0] != "</div><script>parent.document.title=1</script>":
        problems.append(f"JSON key not shown as text: {keys}")
    if driver.find_elements(By.CSS_SELECTOR, "#tab-body img:not(.preview), #tab-body script"):
        problems.append("captured markup became elements")
    driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="headers"]').click()
    headers = driver.find_element(By.ID, "tab-body").text
    if "<script>alert(1)</script>" not in headers:
        problems.append("header value not shown as text")
    alerts = driver.execute_script("return document.querySelectorAll('script:not([src])').length")
    if alerts:
        problems.append(f"{alerts} inline scripts in the page")
    if driver.title != title:
        problems.append(f"page title changed to {driver.title!r}")
    report("markup runs nothing", not problems, "; ".join(problems) or "script, handler and tags shown as text only")


def check_svg(driver):
    """A captured SVG holding a script and an onload handler: shown as source, rendered only in the sandboxed frame
    (its srcdoc), and no URL of it exists at the page's origin; every blob URL the body view made, opened in a tab
    of its own as "Open image in new tab" would, runs nothing at the page's origin (the script would write to the
    origin's localStorage)."""
    problems = []
    driver.execute_script("localStorage.removeItem('tapkit-svg')")
    select_row(driver, 2, "response")
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#tab-body pre.html-source"), 5)
    if "<script>localStorage.setItem" not in driver.find_element(By.CSS_SELECTOR, "#tab-body pre.html-source").text:
        problems.append("the SVG source is not shown as text")
    driver.find_element(By.CSS_SELECTOR, "#tab-body button.render").click()
    frame = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#tab-body iframe.html-frame"), 5)[0]
    if frame.get_attribute("sandbox") != "" or frame.get_attribute("src"):
        problems.append(f"frame sandbox {frame.get_attribute('sandbox')!r}, src {frame.get_attribute('src')!r}")
    driver.switch_to.frame(frame)
    try:
        wait_for(driver, lambda d: d.find_elements(By.ID, "fixture-rect"), 5)
    except TimeoutException:
        problems.append("the sandboxed frame does not draw the SVG")
    finally:
        driver.switch_to.default_content()
    urls = driver.execute_script("""return [...document.querySelectorAll('#tab-body [src], #tab-body [href], #tab-body [data]')]
        .map((e) => e.src || e.href || e.data).filter((u) => typeof u === 'string' && u.startsWith('blob:'));""")
    if urls:
        problems.append(f"the SVG is at {len(urls)} blob URL(s) of the page's origin")
    page = driver.current_window_handle
    for url in urls:
        driver.switch_to.new_window("tab")
        driver.get(url)
        time.sleep(0.5)
        driver.close()
        driver.switch_to.window(page)
    time.sleep(0.3)
    ran = driver.execute_script("return localStorage.getItem('tapkit-svg')")
    if ran is not None:
        problems.append(f"the SVG's script ran at the page's origin: {ran!r}")
    report("svg runs nothing", not problems, "; ".join(problems)
           or f"source as text, drawn in a sandboxed srcdoc frame, {len(urls)} blob URLs, localStorage untouched")


class RecordingServer:
    """A loopback HTTP server that records each request it gets (method, target, header fields in order, body)
    and answers 200: what a copied curl command really sent."""

    def __init__(self, log):
        self.process = subprocess.Popen(
            [sys.executable, "-c", "import base64, http.server, json, sys\n"
             "class H(http.server.BaseHTTPRequestHandler):\n"
             "    def log_message(self, *a): pass\n"
             "    def handle_any(self):\n"
             "        body = self.rfile.read(int(self.headers.get('Content-Length') or 0))\n"
             "        with open(sys.argv[1], 'a') as f:\n"
             "            f.write(json.dumps({'method': self.command, 'path': self.path, 'headers': list(self.headers.items()),\n"
             "                                'body': base64.b64encode(body).decode()}) + '\\n')\n"
             "        self.send_response(200); self.send_header('Content-Length', '2'); self.end_headers(); self.wfile.write(b'ok')\n"
             "    do_GET = do_POST = do_PUT = do_DELETE = handle_any\n"
             "s = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
             "print(s.server_address[1], flush=True)\ns.serve_forever()\n", log],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.port = int(self.process.stdout.readline())

    def stop(self):
        self.process.kill()
        self.process.wait(5)


def check_curl_hostile(driver, records, work):
    """Copy as curl for POSTs whose bodies and header values are hostile ("@canary", quotes, $(...), backticks,
    newlines, NUL, bytes that are not UTF-8): the command from the page, run by bash and by dash in a folder that
    holds a file named canary, with the real curl sent to a recording loopback server (--connect-to), must deliver
    exactly the captured body (its SHA-256 and size from --json) and header fields, read no file and make none."""
    problems = []
    curl = subprocess.run(["sh", "-c", "command -v curl"], capture_output=True, text=True).stdout.strip()
    log = os.path.join(work, "curl-received.ndjson")
    server = RecordingServer(log)
    try:
        rows = exchanges(records)
        for index in [i for i, r in enumerate(rows) if r["request"]["method"] == "POST"]:
            record = rows[index]
            select_row(driver, index, "headers")
            driver.find_element(By.CSS_SELECTOR, "#tab-body button.copy-curl").click()
            command = wait_for(driver, lambda d: d.find_element(By.ID, "curl-text").get_attribute("value"), 5)
            driver.find_element(By.CSS_SELECTOR, "#curl-dialog button[value=close]").click()
            want_sha256, want_size = record["request"]["body"]["sha256"], record["request"]["body"]["size"]
            want_headers = [(k.lower(), v) for k, v in record["request"]["headers"] if k.lower() not in ("host", "content-length")]
            for shell in ["bash", "dash"]:
                folder = os.path.join(work, f"curl-{shell}-{index}")
                os.makedirs(os.path.join(folder, "bin"))
                with open(os.path.join(folder, "canary"), "w") as f:
                    f.write("canary-secret")
                wrapper = os.path.join(folder, "bin", "curl")
                with open(wrapper, "w") as f:
                    f.write(f"#!/bin/sh\nexec {curl} -sS -o /dev/null --connect-to ::127.0.0.1:{server.port} \"$@\"\n")
                os.chmod(wrapper, 0o755)
                with open(os.path.join(folder, "command.sh"), "w") as f:
                    f.write(command + "\n")
                if os.path.exists(log):
                    os.remove(log)
                result = subprocess.run([shell, "command.sh"], cwd=folder, capture_output=True, timeout=20,
                                        env={"PATH": f"{folder}/bin:/usr/bin:/bin", "HOME": folder})
                got = [json.loads(line) for line in open(log)] if os.path.exists(log) else []
                left = sorted(os.listdir(folder))
                if result.returncode != 0 or len(got) != 1:
                    problems.append(f"{shell} row {index}: exit {result.returncode}, {len(got)} requests: {result.stderr[-300:]!r}")
                    continue
                body = base64.b64decode(got[0]["body"])
                headers = [(k.lower(), v) for k, v in got[0]["headers"] if k.lower() not in ("host", "content-length")]
                if hashlib.sha256(body).hexdigest() != want_sha256 or len(body) != want_size:
                    problems.append(f"{shell} row {index}: body {body!r} is not the captured one ({want_size} bytes, sha256 {want_sha256})")
                if headers != want_headers:
                    problems.append(f"{shell} row {index}: header fields {headers} != captured {want_headers}")
                if b"canary-secret" in body or left != ["bin", "canary", "command.sh"]:
                    problems.append(f"{shell} row {index}: the canary was sent or files were made: {left}")
    finally:
        server.stop()
    report("copy as curl runs nothing", not problems, "; ".join(problems)
           or "bash and dash: two hostile POSTs delivered byte for byte, header fields as captured, no file read or made")


def timed(driver, script, *args):
    """Runs an async page script that calls back with elapsed milliseconds."""
    return driver.execute_async_script(script, *args)


FILTER_TIMED = """
const [text, done] = arguments;
const counts = document.getElementById('counts');
const box = document.getElementById('filter');
const begin = performance.now();
const observer = new MutationObserver(() => {
  if (counts.dataset.filter === text) { observer.disconnect(); requestAnimationFrame(() => done([performance.now() - begin, Number(counts.dataset.shown)])); }
});
observer.observe(counts, {attributes: true});
box.value = text; box.dispatchEvent(new Event('input'));
"""

SCROLL_TIMED = """
const [fraction, done] = arguments;
const viewport = document.getElementById('viewport');
const begin = performance.now();
const target = Math.floor((viewport.scrollHeight - viewport.clientHeight) * fraction);
viewport.scrollTop = target;
const want = Math.floor(viewport.scrollTop / 22);
const look = () => {
  const row = document.querySelector(`#spacer .row[data-index="${want}"]:not([hidden])`);
  if (row && row.textContent !== '') done([performance.now() - begin, want, row.dataset.id]);
  else requestAnimationFrame(look);
};
requestAnimationFrame(look);
"""


def check_scale(driver, view, capture, pcap, screenshots):
    began = time.monotonic()
    try:
        open_page(driver, view.url, SCALE, 90)
    except TimeoutException:
        report("scale load", False, f"{total(driver)} of {SCALE} exchanges after {time.monotonic() - began:.1f} s")
        return
    report("scale load", True, f"{SCALE} exchanges listed {time.monotonic() - began:.1f} s after the page was opened")
    # What the generator wrote (its manifest), not what the server or page computed.
    with open(os.path.splitext(pcap)[0] + ".json") as f:
        sent = json.load(f)
    want_4xx = sum(n for code, n in sent["status"].items() if code.startswith("4"))
    problems, figures = [], []
    for text, want in [("status:4xx", want_4xx), ("host:cdn.test type:json", sent["host_type"].get("cdn.test application/json", 0)),
                       ("-status:4xx", SCALE - want_4xx)]:
        elapsed, got = timed(driver, FILTER_TIMED, text)
        figures.append(f"filter {text!r}: {elapsed:.0f} ms, {got} rows")
        if got != want:
            problems.append(f"{text!r} shows {got}, the capture holds {want}")
        if elapsed > 1000:
            problems.append(f"filter {text!r} took {elapsed:.0f} ms")
    timed(driver, FILTER_TIMED, "")
    for fraction in [0.5, 1.0, 0.1]:
        elapsed, index, row_id = timed(driver, SCROLL_TIMED, fraction)
        figures.append(f"scroll to {fraction:.0%}: {elapsed:.0f} ms (row {index})")
        if elapsed > 1000:
            problems.append(f"scroll to {fraction:.0%} took {elapsed:.0f} ms")
    begin = time.monotonic()
    driver.find_element(By.CSS_SELECTOR, '#list-head button[data-key="duration"]').click()
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '#list-head button.sorted'), 5)
    figures.append(f"sort by duration: {(time.monotonic() - begin) * 1000:.0f} ms")
    timed(driver, FILTER_TIMED, "status:5xx")
    driver.save_screenshot(os.path.join(screenshots, "liveview-100k.png"))
    report("scale filter and scroll", not problems, "; ".join(problems + figures))


# The sandboxed command: a download loop that logs every read as it returns, so the command's own record says how
# many bytes arrived when (the goodput under Slow Net, the silence under Black Hole, the moment bytes resume). Each
# fetch is a new connection with a two-second timeout, so after Black Hole the next attempt gets through soon
# instead of waiting out TCP's backed-off retransmissions (a shorter one cut Slow Net's downloads: a full segment
# takes 0.38 s at 32 kbit/s, and a retransmitted one leaves a gap of a second or more).
CLIENT = """
import http.client, os, sys, time
host, port, log, stop = os.environ["TAPKIT_SANDBOX_HOST"], int(sys.argv[1]), sys.argv[2], sys.argv[3]
out = open(log, "a", buffering=1)
n = 0
while not os.path.exists(stop) and n < 5000:
    connection = http.client.HTTPConnection(host, port, timeout=2.0)
    try:
        connection.request("GET", f"/blob.bin?n={n}")
        response = connection.getresponse()
        out.write(f"{time.time():.3f} head {response.status}\\n")
        while chunk := response.read1(65536):
            out.write(f"{time.time():.3f} bytes {len(chunk)}\\n")
        out.write(f"{time.time():.3f} done {response.status}\\n")
    except (OSError, http.client.HTTPException) as error:
        out.write(f"{time.time():.3f} failed {type(error).__name__}\\n")
    finally:
        connection.close()
    n += 1
    time.sleep(0.05)
"""

SLOW_NET_KBIT = 32    # Profiles/slow-net.json
BLOB = 64_000         # 16 s at Slow Net's rate: one download stays under way through the measured window
USER_PROFILE = "W23 Rate 64 kbit"  # a user's profile file: the panel lists it beside the built-ins
SLOW_CHECK = "Slow Net from the page slows the command"
HOLE_CHECK = "Black Hole from the page silences the command"
OFF_CHECK = "off from the page: bytes resume"

class FileServer:
    """python's http.server serving a folder, on 127.0.0.1 (the sandbox reaches it at its host end's address) or,
    through `prefix` (`ip netns exec NS`), on an address inside a namespace."""

    def __init__(self, directory, address="127.0.0.1", prefix=()):
        self.process = subprocess.Popen(
            [*prefix, sys.executable, "-c", "import http.server, functools, sys\n"
             "http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None\n"
             "s = http.server.ThreadingHTTPServer((sys.argv[2], 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1]))\n"
             "print(s.server_address[1], flush=True)\ns.serve_forever()\n", directory, address],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.port = int(self.process.stdout.readline())

    def stop(self):
        self.process.kill()
        self.process.wait(5)


def events(log):
    """The command's own record: (time, kind, value) for each head, read, end and failure."""
    if not os.path.exists(log):
        return []
    rows = []
    for line in open(log):
        parts = line.split()
        if len(parts) >= 2:
            rows.append((float(parts[0]), parts[1], parts[2] if len(parts) > 2 else ""))
    return rows


def reads(log, begin, end):
    """The command's reads in [begin, end): (time, bytes)."""
    return [(t, int(n)) for t, kind, n in events(log) if kind == "bytes" and begin <= t < end]


def goodput(log, begin, end):
    """kbit/s the command read in [begin, end), from its first read there to its last (the bytes of the first read
    arrived before that first moment), so the figure does not depend on where a read falls against the window's
    edges; None with fewer than three reads."""
    inside = reads(log, begin, end)
    if len(inside) < 3:
        return None
    return sum(n for _, n in inside[1:]) * 8 / (inside[-1][0] - inside[0][0]) / 1000


def first_read_after(log, moment, seconds):
    """When the command next read bytes after `moment`, waiting up to `seconds` (None if it did not)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        later = [t for t, kind, _ in events(log) if kind == "bytes" and t > moment]
        if later:
            return later[0]
        time.sleep(0.1)
    return None


def switch_text(driver):
    # Read in one script call: the panel re-renders on every state the server sends, so an element found by one
    # call may be gone by the next.
    return driver.execute_script("return document.querySelector('#conditioner .switch-label')?.textContent ?? ''")


def panel_text(driver):
    return driver.execute_script("return document.getElementById('conditioner').innerText")


def panel_errors(driver):
    return driver.execute_script("return [...document.querySelectorAll('#conditioner .error')].map((e) => e.innerText)")


def click_switch(driver):
    """Clicks the on/off switch once it is enabled, again should the panel have re-rendered under the click."""
    wait_for(driver, lambda d: not d.find_element(By.ID, "conditioner-switch").get_attribute("disabled")
             and (d.find_element(By.ID, "conditioner-switch").click() or True), 10)


def pick(driver, name):
    """Picks a profile in the panel: a click on its label."""
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#conditioner .profile input:not([disabled])"), 10)
    label = [l for l in driver.find_elements(By.CSS_SELECTOR, "#conditioner .profile label")
             if l.find_element(By.CLASS_NAME, "name").text == name][0]
    label.click()


def choose_profile(driver, name, switch_on):
    """Picks a profile in the panel, then the switch if it is off; waits until the panel says it is on, or shows why
    not (raised)."""
    pick(driver, name)
    if switch_on:
        click_switch(driver)
    try:
        wait_for(driver, lambda d: switch_text(d) == f"On: {name}"
                 or d.find_elements(By.CSS_SELECTOR, "#conditioner .error"), 10)
    except TimeoutException:
        pass
    if switch_text(driver) != f"On: {name}":
        errors = panel_errors(driver)
        raise RuntimeError(f"{name} not switched on: the panel says {errors or panel_text(driver)[:200]!r}")


SLOW_SETTLE, SLOW_WINDOW = 1.0, 4.0  # the shaper's first burst passes at once: measure from a second after the switch
HOLE_SILENCE = 3.0


def check_live(driver, capture, work, screenshots):
    """A sandboxed command's exchanges appear while it runs; Slow Net switched from the page once a download is under
    way brings the command's goodput to 32 kbit/s, Black Hole silences it, off lets bytes through again; each switch
    is marked on the timeline at the moment the command saw it."""
    www = os.path.join(work, "www")
    os.makedirs(www, exist_ok=True)
    with open(os.path.join(www, "blob.bin"), "wb") as f:
        f.write(os.urandom(BLOB))
    log, stop, client = (os.path.join(work, name) for name in ("reads.log", "stop", "client.py"))
    for old in (log, stop):
        if os.path.exists(old):
            os.remove(old)
    with open(client, "w") as f:
        f.write(CLIENT)
    server = FileServer(www)
    # A user's profile file, where `condition` finds them: the panel lists it beside the built-ins.
    profiles = os.path.join(work, "config", "tapkit", "profiles")
    os.makedirs(profiles, exist_ok=True)
    with open(os.path.join(profiles, "w23-rate-64k.json"), "w") as f:
        json.dump({"name": USER_PROFILE, "description": "64 kbit/s each way, no delay or loss",
                   "downlink": {"bandwidthKbit": 64}, "uplink": {"bandwidthKbit": 64}}, f)
    view = LiveView(capture, None, arguments=["--ui", "127.0.0.1:0", "--", sys.executable, client, str(server.port), log, stop],
                    environment={**os.environ, "XDG_CONFIG_HOME": os.path.join(work, "config")})
    try:
        driver.get(view.url)
        wait_for(driver, lambda d: total(d) >= 3, 15)
        running = view.process.poll() is None and not os.path.exists(stop)
        first = total(driver)
        wait_for(driver, lambda d: total(d) > first, 5)
        report("live rows while the command runs", running, f"{total(driver)} rows, the command still running")

        panel = panel_text(driver)
        report("conditioner panel for the sandbox", "sandbox" in panel and "Slow Net" in panel and USER_PROFILE in panel,
               panel[:300])
        before = time.time()
        unconditioned = goodput(log, before - 1.0, before)

        # The built-in Slow Net and Black Hole, whatever the kernel: without netem the sandbox's delay and loss come
        # from the user-space engine in its namespace. A refusal raises, and the run fails saying why.
        choose_profile(driver, "Slow Net", switch_on=True)
        slow_at = api_state(view)["switches"][-1]["t"]
        time.sleep(max(0.0, slow_at + SLOW_SETTLE + SLOW_WINDOW - time.time()) + 0.2)
        slow_rate = goodput(log, slow_at + SLOW_SETTLE, slow_at + SLOW_SETTLE + SLOW_WINDOW)
        report(SLOW_CHECK, slow_rate is not None and SLOW_NET_KBIT * 0.6 <= slow_rate <= SLOW_NET_KBIT * 1.25,
               f"unconditioned: {unconditioned and round(unconditioned)} kbit/s read in the last second; Slow Net: "
               f"{slow_rate and round(slow_rate, 1)} kbit/s read by the command from {SLOW_SETTLE:.0f} s to "
               f"{SLOW_SETTLE + SLOW_WINDOW:.0f} s after the switch")

        choose_profile(driver, "Black Hole", switch_on=False)
        hole_at = api_state(view)["switches"][-1]["t"]
        time.sleep(max(0.0, hole_at + HOLE_SILENCE - time.time()) + 0.2)
        last_before = ([t for t, _ in reads(log, slow_at, hole_at + HOLE_SILENCE)] or [None])[-1]
        silent = sum(n for _, n in reads(log, hole_at + 0.5, hole_at + HOLE_SILENCE))
        failures = [kind for t, kind, _ in events(log) if kind == "failed" and t > hole_at]
        last = "no read since Slow Net" if last_before is None else \
            f"the last read {abs(last_before - hole_at):.2f} s {'after' if last_before > hole_at else 'before'} it"
        report(HOLE_CHECK, silent == 0 and failures,
               f"{silent} bytes read from 0.5 s to {HOLE_SILENCE:.0f} s after the switch ({last}); "
               f"{len(failures)} fetches failed meanwhile")

        click_switch(driver)
        wait_for(driver, lambda d: switch_text(d) == "Off", 10)
        off_at = api_state(view)["switches"][-1]["t"]
        resumed = first_read_after(log, off_at, 5)
        report(OFF_CHECK, resumed is not None, f"first read {resumed and round(resumed - off_at, 2)} s after the switch")

        state = api_state(view)
        marks = timeline_marks(driver)
        times = [s["t"] for s in state["switches"]]
        want_marks = ["Slow Net", "Black Hole", ""]
        report("switches marked on the timeline", marks[-len(want_marks):] == want_marks and times == sorted(times)
               and times[-1] == off_at, f"marks {marks}, want {want_marks}; server times {times}")
        driver.save_screenshot(os.path.join(screenshots, "liveview-conditioner.png"))

        open(stop, "w").close()
        wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "ended", 15)
        heads = sum(1 for _, kind, status in events(log) if kind == "head" and status == "200")
        shown_200 = filter_count(driver, "status:200")
        report("every response the command read is a row", shown_200 == heads,
               f"page status:200 rows {shown_200}, responses the command read {heads}")
    finally:
        open(stop, "w").close()
        leave(driver, view)
        server.stop()


INTERFACE_PROFILE = "3G"   # Profiles/3g.json: 780 kbit/s and 100 ms down (the user-space engine: no netem here)
INTERFACE_CHECKS = ["interface: refused confirmation changes nothing", "interface: confirmed profile slows a download",
                    "interface: off restores tc exactly", "interface: stopping the view restores tc exactly"]


def run_quiet(*command):
    return subprocess.run(list(command), capture_output=True, text=True, timeout=15)


def api_state(view):
    """The server's own account of the conditioner (GET /api/conditioner), not the page's."""
    url = view.url.split("/?token=")
    request = urllib.request.Request(url[0] + "/api/conditioner", headers={"X-TapKit-Token": url[1]})
    with urllib.request.urlopen(request, timeout=5) as answer:
        return json.load(answer)


def curl_download(url, size):
    """curl's own figures for one download: seconds, or None when it did not get all `size` bytes."""
    out = run_quiet("curl", "-s", "-o", "/dev/null", "--max-time", "10", "-w", "%{http_code} %{size_download} %{time_total}", url)
    code, got, seconds = (out.stdout.split() + ["", "", ""])[:3]
    return float(seconds) if code == "200" and got == str(size) else None


def dialog_open(driver):
    return driver.execute_script("return document.getElementById('confirm-dialog').open")


def switch_on_confirmed(driver):
    """The switch, then Apply in the confirmation dialog; waits until the panel says the profile is on."""
    click_switch(driver)
    wait_for(driver, dialog_open, 5)
    driver.find_element(By.ID, "confirm-ok").click()
    wait_for(driver, lambda d: switch_text(d) == f"On: {INTERFACE_PROFILE}", 15)


def timeline_marks(driver):
    """The timeline's switches as the page lists them (its text twin of the marks drawn on the canvas)."""
    return driver.execute_script("return [...document.querySelectorAll('#switches li')].map((li) => li.getAttribute('data-profile'))")


def check_interface(driver, capture, work, screenshots):
    """`capture -i IFACE --ui` on a veth whose peer is in a namespace made here, with a server there: a profile chosen
    on the page is applied only through the confirmation dialog (refused once: nothing changes), a download from the
    namespace gets slower by curl's own clock, the switch is marked on the timeline, and off (then stopping the view)
    gives back `tc qdisc show` byte for byte."""
    tag = os.urandom(3).hex()
    namespace, host, inner = f"w23-bns{tag}", f"w23-bh{tag}", f"w23-bn{tag}"
    subnet = f"10.232.{int(tag[:2], 16) % 250 + 1}"
    setup = [["netns", "add", namespace], ["link", "add", host, "type", "veth", "peer", "name", inner, "netns", namespace],
             ["addr", "add", f"{subnet}.1/24", "dev", host], ["link", "set", host, "up"],
             ["-n", namespace, "addr", "add", f"{subnet}.2/24", "dev", inner],
             ["-n", namespace, "link", "set", inner, "up"], ["-n", namespace, "link", "set", "lo", "up"]]
    www, state = os.path.join(work, "iface-www"), os.path.join(work, "iface-state")
    os.makedirs(www, exist_ok=True)
    size = 100_000  # about a second at 3G's 780 kbit/s, milliseconds without it
    with open(os.path.join(www, "blob.bin"), "wb") as f:
        f.write(os.urandom(size))
    server = view = None
    try:
        for command in setup:
            result = run_quiet("ip", *command)
            if result.returncode != 0:
                raise RuntimeError(f"ip {' '.join(command)}: {result.stderr}")
        server = FileServer(www, f"{subnet}.2", ["ip", "netns", "exec", namespace])
        blob = f"http://{subnet}.2:{server.port}/blob.bin"

        def qdiscs():
            return run_quiet("tc", "qdisc", "show", "dev", host).stdout

        bare = qdiscs()
        view = LiveView(capture, None, arguments=["-i", host, "--ui", "127.0.0.1:0"],
                        environment={**os.environ, "TAPKIT_STATE_DIR": state})
        driver.get(view.url)
        wait_for(driver, lambda d: f"interface {host}" in d.find_element(By.ID, "conditioner").text, 10)
        unconditioned = curl_download(blob, size)

        # Refused: the dialog names the interface; Cancel leaves the switch off and the interface untouched.
        pick(driver, INTERFACE_PROFILE)
        click_switch(driver)
        wait_for(driver, dialog_open, 5)
        question = driver.find_element(By.ID, "confirm-text").text
        driver.save_screenshot(os.path.join(screenshots, "liveview-confirm.png"))
        driver.find_element(By.CSS_SELECTOR, "#confirm-dialog button[value=cancel]").click()
        wait_for(driver, lambda d: not dialog_open(d), 5)
        time.sleep(0.3)  # a request the page wrongly sent would have been answered by now
        refused = api_state(view)
        problems = []
        if host not in question or INTERFACE_PROFILE not in question:
            problems.append(f"the dialog asks {question!r}")
        if refused["active"] is not None or len(refused["switches"]) != 1 or qdiscs() != bare:
            problems.append(f"after Cancel the server has {refused['active']!r}, switches {refused['switches']}")
        if switch_text(driver) != "Off" or driver.execute_script("return document.getElementById('conditioner-switch').checked"):
            problems.append(f"after Cancel the panel shows {switch_text(driver)!r}")
        report(INTERFACE_CHECKS[0], not problems, "; ".join(problems) or
               f"dialog: {question!r}; Cancel: server still off, `tc qdisc show dev {host}` byte-equal")

        # Confirmed: applied, and curl's download from the namespace slows to the profile's rate.
        switch_on_confirmed(driver)
        applied = qdiscs()
        conditioned = curl_download(blob, size)
        marks = timeline_marks(driver)
        rate = conditioned and size * 8 / conditioned / 1000
        report(INTERFACE_CHECKS[1], applied != bare and unconditioned is not None and conditioned is not None
               and conditioned > 5 * unconditioned and rate <= 780 * 1.25 and marks[-1:] == [INTERFACE_PROFILE],
               f"100 KB in {unconditioned} s before, {conditioned} s with {INTERFACE_PROFILE} "
               f"({rate and round(rate)} kbit/s, profile 780); marks {marks}")

        # Off from the page: no dialog (it only restores), the interface as it was.
        click_switch(driver)
        try:
            wait_for(driver, lambda d: switch_text(d) == "Off", 15)
        except TimeoutException:
            pass
        marks = timeline_marks(driver)
        errors = panel_errors(driver)
        after = curl_download(blob, size)
        restored = qdiscs()
        report(INTERFACE_CHECKS[2], restored == bare and switch_text(driver) == "Off" and marks[-2:] == [INTERFACE_PROFILE, ""]
               and not errors and after is not None,
               f"panel {switch_text(driver)!r}, errors {errors}, marks {marks}; 100 KB in {after} s after; "
               f"tc before {bare!r}, after {restored!r}")

        # Applied again, then the view is stopped (Ctrl-C): it puts back what the interface had.
        switch_on_confirmed(driver)
        reapplied = qdiscs()
        leave(driver, view)
        ifb = run_quiet("ip", "link", "show", f"tk-{host}").returncode == 0
        report(INTERFACE_CHECKS[3], reapplied != bare and qdiscs() == bare and not ifb and view.process.returncode == 0,
               f"exit {view.process.returncode}; ifb left: {ifb}; tc after stop {qdiscs()!r}")
    finally:
        if view:
            leave(driver, view)
        if server:
            server.stop()
        run_quiet("ip", "netns", "del", namespace)  # takes the veth pair with it
        run_quiet("ip", "link", "del", f"tk-{host}")  # the ifb, should a restore have failed


def main():
    global SCALE
    parser = argparse.ArgumentParser()
    for name in ["--capture", "--fixtures", "--work", "--screenshots", "--generator"]:
        parser.add_argument(name, required=True)
    parser.add_argument("--scale", type=int, default=SCALE, help="exchanges in the generated capture")
    parser.add_argument("--live", action="store_true", help="only the sandboxed command and conditioner checks (root)")
    args = parser.parse_args()
    SCALE = args.scale
    # Started from Foundation's Process, this process inherits blocked signals: unblock them, so the alarm and the
    # Swift suite's timeout (TERM) end the run through the finally blocks that close chromium and the servers.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signal.valid_signals())

    def give_up(number, frame):
        raise TimeoutError(f"signal {number}: the browser run took too long")
    signal.signal(signal.SIGALRM, give_up)
    signal.signal(signal.SIGTERM, give_up)
    signal.alarm(150)
    work = args.work
    downloads = os.path.join(work, "downloads")
    os.makedirs(downloads, exist_ok=True)
    os.makedirs(args.screenshots, exist_ok=True)
    if args.live:
        driver = browser(downloads)
        try:
            check_interface(driver, args.capture, work, args.screenshots)
            check_live(driver, args.capture, work, args.screenshots)
        finally:
            driver.quit()
        print(json.dumps({"done": True, "seconds": round(time.monotonic() - started, 1)}), flush=True)
        return
    subprocess.run([sys.executable, args.generator, work, "--exchanges", str(SCALE)], check=True, timeout=60)
    many = os.path.join(work, "many-exchanges.pcap")
    # The big capture is read while the small checks run.
    scale_view = LiveView(args.capture, many)
    views = [scale_view]
    driver = browser(downloads)
    try:
        sample = os.path.join(args.fixtures, "http-sample.pcap")
        records = oracle(args.capture, sample)
        har, bodies = har_bodies(args.capture, sample, work)
        view = LiveView(args.capture, sample, plain_user=True)
        views.append(view)
        open_page(driver, view.url, len(exchanges(records)))
        check_rows(driver, "http-sample", records, view.user)
        check_filters(driver, records)
        check_json_tree(driver, bodies[0])
        driver.save_screenshot(os.path.join(args.screenshots, "liveview-json.png"))
        check_har(driver, downloads, har)
        check_curl(driver, records, work)
        check_pause_clear(driver, len(exchanges(records)))
        leave(driver, view)

        tls = os.path.join(args.fixtures, "tls", "tls13-h2.pcap")
        keys = ["--keylog", os.path.join(args.fixtures, "tls", "tls13-h2.keys")]
        records = oracle(args.capture, tls, *keys)
        view = LiveView(args.capture, tls, *keys)  # as whoever runs the test (root in CI)
        views.append(view)
        open_page(driver, view.url, len(exchanges(records)))
        check_rows(driver, "tls13-h2 (h2, TLS)", records, view.user)
        select_row(driver, 0, "connection")
        text = driver.find_element(By.ID, "tab-body").text
        want = [r["tls"] for r in records if "tls" in r][0]
        report("tls facts", f"Cipher suite {want['cipher_suite']}" in text and f"Server name (SNI) {want['server_name']}" in text
               and "Stream 1" in text, text[:300])
        leave(driver, view)

        check_quic(driver, args.capture, args.fixtures, views)

        websocket = os.path.join(args.fixtures, "h2", "websocket.pcap")
        records = oracle(args.capture, websocket)
        view = LiveView(args.capture, websocket)
        views.append(view)
        open_page(driver, view.url, len(exchanges(records)))
        check_websocket(driver, records)
        leave(driver, view)

        image = os.path.join(args.fixtures, "http-binary-300k.pcap")
        _, bodies = har_bodies(args.capture, image, work)
        view = LiveView(args.capture, image)
        views.append(view)
        open_page(driver, view.url, len(exchanges(oracle(args.capture, image))))
        check_image(driver, bodies[0])
        driver.save_screenshot(os.path.join(args.screenshots, "liveview-image.png"))
        leave(driver, view)

        markup = os.path.join(work, "markup.pcap")
        view = LiveView(args.capture, markup)
        views.append(view)
        markup_records = oracle(args.capture, markup)
        open_page(driver, view.url, len(exchanges(markup_records)))
        check_markup(driver, view.url)
        check_svg(driver)
        check_curl_hostile(driver, markup_records, work)
        leave(driver, view)

        check_scale(driver, scale_view, args.capture, many, args.screenshots)
        errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        report("no page errors", not errors, "; ".join(errors))
    finally:
        driver.quit()
        for view in views:
            view.stop()
    print(json.dumps({"done": True, "seconds": round(time.monotonic() - started, 1)}), flush=True)


if __name__ == "__main__":
    main()
