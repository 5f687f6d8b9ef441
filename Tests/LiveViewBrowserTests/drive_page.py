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
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

SCALE = 100_000
started = time.monotonic()


def report(name, ok, detail=""):
    print(json.dumps({"check": name, "ok": bool(ok), "detail": str(detail)[:2000],
                      "at": round(time.monotonic() - started, 2)}), flush=True)


class LiveView:
    """`capture -r FILE --ui 127.0.0.1:0`, its URL read from the line it prints."""

    def __init__(self, capture, pcap, *extra):
        self.process = subprocess.Popen([capture, "-r", pcap, "--ui", "127.0.0.1:0", *extra],
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
        # SIGKILL: a view of a file has nothing left to write, and a child of Foundation's Process may have
        # SIGINT blocked.
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)


def oracle(capture, pcap, *extra):
    out = subprocess.run([capture, "-r", pcap, "--http", "--json", *extra], capture_output=True, timeout=120).stdout
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def exchanges(records):
    return [r for r in records if "tls" not in r and "type" not in r]


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
    protocol = "h2" if "http2" in record else version.lower()
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
    return WebDriverWait(driver, seconds, poll_frequency=0.05).until(lambda d: condition(d))


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


def check_rows(driver, name, records):
    tls = {(r["client"], r["server"]) for r in records if "tls" in r}
    expected = [expected_row(r, tls) for r in exchanges(records)]
    got = [dict(zip(FIELDS, row["cells"])) for row in rendered_rows(driver)]
    problems = [f"row {i}: page {g} != oracle {e}" for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    if len(got) != len(expected):
        problems.append(f"{len(got)} rows shown, {len(expected)} exchanges in --json")
    report(f"list {name}", not problems, "; ".join(problems) or f"{len(expected)} rows equal --json")


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
    want_4xx = len(oracle(capture, pcap, "--status", "4xx"))
    problems, figures = [], []
    for text, want in [("status:4xx", want_4xx), ("host:cdn.test type:json", 0), ("-status:4xx", SCALE - want_4xx)]:
        elapsed, got = timed(driver, FILTER_TIMED, text)
        figures.append(f"filter {text!r}: {elapsed:.0f} ms, {got} rows")
        if want is not None and text != "host:cdn.test type:json" and got != want:
            problems.append(f"{text!r} shows {got}, --status oracle {want}")
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


def main():
    global SCALE
    parser = argparse.ArgumentParser()
    for name in ["--capture", "--fixtures", "--work", "--screenshots", "--generator"]:
        parser.add_argument(name, required=True)
    parser.add_argument("--scale", type=int, default=SCALE, help="exchanges in the generated capture")
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
        view = LiveView(args.capture, sample)
        views.append(view)
        open_page(driver, view.url, len(exchanges(records)))
        check_rows(driver, "http-sample", records)
        check_filters(driver, records)
        check_json_tree(driver, bodies[0])
        driver.save_screenshot(os.path.join(args.screenshots, "liveview-json.png"))
        check_har(driver, downloads, har)
        leave(driver, view)

        tls = os.path.join(args.fixtures, "tls", "tls13-h2.pcap")
        keys = ["--keylog", os.path.join(args.fixtures, "tls", "tls13-h2.keys")]
        records = oracle(args.capture, tls, *keys)
        view = LiveView(args.capture, tls, *keys)
        views.append(view)
        open_page(driver, view.url, len(exchanges(records)))
        check_rows(driver, "tls13-h2 (h2, TLS)", records)
        select_row(driver, 0, "connection")
        text = driver.find_element(By.ID, "tab-body").text
        want = [r["tls"] for r in records if "tls" in r][0]
        report("tls facts", f"Cipher suite {want['cipher_suite']}" in text and f"Server name (SNI) {want['server_name']}" in text
               and "Stream 1" in text, text[:300])
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
        open_page(driver, view.url, 2)
        check_markup(driver, view.url)
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
