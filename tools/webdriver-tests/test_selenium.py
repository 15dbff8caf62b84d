"""jsprof's WebDriver server, driven by Selenium's Python client (run by run.py, which serves
pages/ and starts `jsprof --webdriver 0`, or with --engine servo `jsprof-servo --webdriver 0`).

Environment: JSPROF_WEBDRIVER_URL (the server), JSPROF_PAGES and JSPROF_PAGES2 (pages/ from
two origins), JSPROF_ENGINE (jsprof or servo). Every test has a session of its own (the
`driver` fixture), so each starts from about:blank with the default timeouts and a visible
window.
"""

import json
import os
import time
import urllib.error
import urllib.request

import pytest
from selenium import webdriver
from selenium.common.exceptions import (InvalidArgumentException, InvalidSelectorException, JavascriptException,
                                        NoSuchElementException, NoSuchFrameException, SessionNotCreatedException,
                                        StaleElementReferenceException, TimeoutException, WebDriverException)
from selenium.webdriver.common import selenium_manager
from selenium.webdriver.common.by import By
from selenium.webdriver.common.options import ArgOptions
from selenium.webdriver.remote.webelement import WebElement

WD = os.environ["JSPROF_WEBDRIVER_URL"]
PAGES = os.environ["JSPROF_PAGES"]
PAGES2 = os.environ["JSPROF_PAGES2"]
# The browser behind the server: jsprof, or jsprof-servo (Servo with jsprof), run.py --engine.
ENGINE = os.environ.get("JSPROF_ENGINE", "jsprof")

# The sampleInterval (ms) of the Force Sample tests' profilers, so that every sample in their
# traces is a forced one: 1e9 ms is about 11.6 days. A session may take a timed sample in the
# block it starts in, at a uniformly random point of its interval, so a test of W seconds
# gets one with probability about W / 1e6 (1e-5 for a 10 s test; with 100 s it was W / 100).
# The engine keeps it exactly (a multiple of the 20 ms base; 1e15 ns fits its u64 clock).
FORCE_ONLY_INTERVAL = 1_000_000_000


def _no_selenium_manager(*args, **kw):
    raise AssertionError("Selenium Manager must not run: there is no local driver or browser to fetch")


# A Remote driver never asks Selenium Manager for a driver; make sure nothing here does.
selenium_manager.SeleniumManager.binary_paths = _no_selenium_manager


def options(**capabilities):
    opts = ArgOptions()
    opts.set_capability("browserName", "jsprof")
    for name, value in capabilities.items():
        opts.set_capability(name, value)
    return opts


def new_driver(**capabilities):
    d = webdriver.Remote(command_executor=WD, options=options(**capabilities))
    # The JS Self-Profiling API's Force Sample: Selenium has no binding for it.
    d.command_executor.add_command("forceSample", "POST", "/session/$sessionId/forcesample")
    return d


@pytest.fixture
def driver():
    d = new_driver()
    try:
        yield d
    finally:
        d.quit()


def force_sample(d):
    """POST /session/{id}/forcesample; its value (null)."""
    start = time.monotonic()
    try:
        return d.execute("forceSample")["value"]
    except WebDriverException as e:
        raise AssertionError(f"forcesample failed after {time.monotonic() - start:.1f} s: {e.msg}") from e


def raw(method, path, body=None):
    """A request straight to the server: (HTTP status, JSON answer)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(WD + path, data=data, method=method,
                                 headers={"Content-Type": "application/json; charset=utf-8"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def page(name):
    return f"{PAGES}/{name}"


def release(action, **query):
    """The pages server's /release switch (run.py's Release)."""
    qs = "&".join(f"{k}={v}" for k, v in query.items())
    with urllib.request.urlopen(f"{PAGES}/{action}" + (f"?{qs}" if qs else ""), timeout=60) as r:
        return r.read().decode()


def frame_names(trace, sample):
    """The names of a sample's frames, innermost first, with whether each is the page's."""
    out = []
    stack_id = sample.get("stackId")
    while stack_id is not None:
        stack = trace["stacks"][stack_id]
        frame = trace["frames"][stack["frameId"]]
        resource = frame.get("resourceId")
        url = trace["resources"][resource] if resource is not None else None
        out.append((frame["name"], url))
        stack_id = stack.get("parentId")
    return out


# --- sessions and status -----------------------------------------------------------------------

def test_status_ready_only_without_a_session():
    status, answer = raw("GET", "/status")
    assert status == 200
    assert answer["value"]["ready"] is True
    assert isinstance(answer["value"]["message"], str)
    d = new_driver()
    try:
        status, answer = raw("GET", "/status")
        assert status == 200
        assert answer["value"]["ready"] is False
    finally:
        d.quit()
    assert raw("GET", "/status")[1]["value"]["ready"] is True


def test_new_session_capabilities(driver):
    caps = driver.capabilities
    assert caps["browserName"] == "jsprof"
    assert caps["pageLoadStrategy"] == "normal"
    assert caps["setWindowRect"] is True
    assert caps["jsprof:forceSample"] is True
    assert caps["timeouts"] == {"implicit": 0, "pageLoad": 300000, "script": 30000}


def test_new_session_with_an_unknown_capability_fails():
    with pytest.raises((SessionNotCreatedException, InvalidArgumentException)):
        new_driver(noSuchCapability=True).quit()
    # The failed request left no session behind.
    assert raw("GET", "/status")[1]["value"]["ready"] is True


def test_new_session_with_another_browser_name_fails():
    with pytest.raises(SessionNotCreatedException):
        webdriver.Remote(command_executor=WD, options=options(browserName="firefox")).quit()


def test_delete_session_then_a_second_session_finds_about_blank():
    first = new_driver()
    first.get(page("index.html"))
    assert first.title == "jsprof WebDriver: index"
    first.quit()
    second = new_driver()
    try:
        assert second.current_url == "about:blank"
        assert second.title == ""
        assert second.execute_script("return 6 * 7") == 42
        second.get(page("second.html"))
        assert second.title == "jsprof WebDriver: second"
    finally:
        second.quit()


# --- navigation --------------------------------------------------------------------------------

def test_open_a_page(driver):
    driver.get(page("index.html"))
    assert driver.title == "jsprof WebDriver: index"
    assert driver.current_url == page("index.html")
    source = driver.page_source
    assert 'id="main"' in source
    assert "<b>WebDriver</b>" in source


def test_navigate_back_forward_refresh(driver):
    driver.get(page("index.html"))
    driver.get(page("second.html"))
    assert driver.title == "jsprof WebDriver: second"
    assert driver.current_url == page("second.html")
    driver.back()
    assert driver.current_url == page("index.html")
    assert driver.title == "jsprof WebDriver: index"
    driver.forward()
    assert driver.current_url == page("second.html")
    assert driver.title == "jsprof WebDriver: second"
    # Refresh loads the document again: what a script left in the old one is gone.
    driver.execute_script("window.marker = 'before refresh'")
    assert driver.execute_script("return window.marker") == "before refresh"
    driver.refresh()
    assert driver.current_url == page("second.html")
    assert driver.execute_script("return typeof window.marker") == "undefined"
    assert driver.find_element(By.ID, "second").text == "The second page"


def test_navigate_to_a_url_with_a_fragment_and_query(driver):
    driver.get(page("index.html?x=1#part"))
    assert driver.current_url == page("index.html?x=1#part")
    assert driver.execute_script("return [location.search, location.hash]") == ["?x=1", "#part"]


def test_navigation_errors(driver):
    with pytest.raises(InvalidArgumentException):
        driver.get("not a url")
    # Nothing listens on port 1: the navigation fails, the session goes on.
    with pytest.raises(WebDriverException):
        driver.get("http://127.0.0.1:1/")
    driver.get(page("second.html"))
    assert driver.title == "jsprof WebDriver: second"
    # An HTTP error status still shows its document, as browsers do.
    driver.get(page("missing.html"))
    assert driver.current_url == page("missing.html")
    assert driver.execute_script("return document.readyState") == "complete"


# --- scripts -----------------------------------------------------------------------------------

def test_execute_script_arguments_and_results(driver):
    driver.get(page("index.html"))
    got = driver.execute_script(
        "return [arguments[0] + 1, arguments[1].toUpperCase(), arguments[2].length, arguments[3].k, typeof arguments[4]]",
        41, "text", [1, 2, 3], {"k": "v"}, None)
    assert got == [42, "TEXT", 3, "v", "object"]
    # The spec's JSON clone gives a property whose value is undefined as null; Servo's own
    # (servo-script 0.7.0, webdriver_handlers.rs clone_an_object, which jsprof-servo's
    # Execute Script uses) leaves such a property out.
    undefined = {} if ENGINE == "servo" else {"u": None}
    assert driver.execute_script("return {a: [1, 2.5, {b: 'c'}], n: null, t: true, u: undefined}") == \
        {"a": [1, 2.5, {"b": "c"}], "n": None, "t": True, **undefined}
    assert driver.execute_script("return 'this' + ' ' + (this === window)") == "this true"
    assert driver.execute_script("return Promise.resolve(7)") == 7
    assert driver.execute_script("return") is None


def test_execute_script_element_in_and_out(driver):
    driver.get(page("index.html"))
    main = driver.find_element(By.ID, "main")
    back = driver.execute_script("arguments[0].setAttribute('data-touched', 'yes'); return arguments[0]", main)
    assert isinstance(back, WebElement)
    assert back == main
    assert main.get_dom_attribute("data-touched") == "yes"
    # Elements inside returned arrays and objects, and found by the script itself.
    found = driver.execute_script("return {list: document.querySelectorAll('li.item'), one: document.body}")
    assert [e.text for e in found["list"]] == ["one", "two", "three"]
    assert found["one"].tag_name == "body"
    assert driver.execute_script("return arguments[0][0].textContent", [main]) == "Hello WebDriver!"


def test_execute_script_thrown_error(driver):
    driver.get(page("index.html"))
    with pytest.raises(JavascriptException) as e:
        driver.execute_script("throw new TypeError('boom from the page')")
    assert "boom from the page" in e.value.msg
    with pytest.raises(JavascriptException):
        driver.execute_script("return Promise.reject(new Error('rejected'))")
    with pytest.raises(JavascriptException):
        driver.execute_script("this is not JavaScript")


def test_a_page_that_replaces_builtins_does_not_break_the_commands(driver):
    """The engine's side of Execute Script, element references and results uses the
    built-ins captured before any page script ran, not the page's replacements."""
    driver.get(page("index.html"))
    driver.execute_script(
        "window.Set = null; window.Map = null; window.Function = null; JSON.stringify = () => 'x';"
        "JSON.parse = () => ({}); Promise.prototype.then = function () { throw new Error('then'); };"
        "Object.keys = () => []; Array.isArray = () => false;"
        "Object.defineProperty(Array.prototype, '0', {set() { throw new Error('setter'); }, configurable: true});")
    assert driver.execute_script("return [1, {a: 'b'}, null]") == [1, {"a": "b"}, None]
    assert driver.execute_async_script("arguments[0]([2, 3])") == [2, 3]
    heading = driver.find_element(By.TAG_NAME, "h1")
    assert driver.execute_script("return arguments[0]", heading) == heading
    assert heading.text == "The index page"


def test_execute_script_cyclic_result(driver):
    driver.get(page("index.html"))
    with pytest.raises(JavascriptException) as e:
        driver.execute_script("const a = {name: 'a'}; a.self = a; return a")
    assert "cyclic" in e.value.msg
    with pytest.raises(JavascriptException):
        driver.execute_script("const a = []; a.push([a]); return a")
    # A value seen twice without a cycle is no cycle.
    assert driver.execute_script("const o = {x: 1}; return [o, o]") == [{"x": 1}, {"x": 1}]


def test_execute_async_script_callback(driver):
    driver.get(page("index.html"))
    got = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "const n = arguments[0];"
        "setTimeout(() => done({doubled: n * 2, el: document.getElementById('main')}), 50);", 21)
    assert got["doubled"] == 42
    assert got["el"].get_dom_attribute("id") == "main"


def test_execute_async_script_timeout(driver):
    driver.get(page("index.html"))
    driver.set_script_timeout(0.5)
    assert driver.timeouts.script == 0.5
    start = time.monotonic()
    with pytest.raises(TimeoutException):  # Selenium's class for "script timeout"
        driver.execute_async_script("/* never calls back */")
    assert time.monotonic() - start < 15
    status, answer = raw("POST", f"/session/{driver.session_id}/execute/async",
                         {"script": "/* never calls back */", "args": []})
    assert (status, answer["value"]["error"]) == (500, "script timeout")
    # Execute Script waits for a promise it returns, within the same timeout.
    with pytest.raises(TimeoutException):
        driver.execute_script("return new Promise(() => {})")
    # The session goes on.
    assert driver.execute_script("return 1") == 1


def test_timeouts_get_and_set(driver):
    t = driver.timeouts
    assert (t.implicit_wait, t.page_load, t.script) == (0, 300, 30)
    driver.implicitly_wait(0.25)
    driver.set_page_load_timeout(20)
    t = driver.timeouts
    assert (t.implicit_wait, t.page_load, t.script) == (0.25, 20, 30)


# --- elements ----------------------------------------------------------------------------------

def test_find_elements_by_css_selector_and_tag_name(driver):
    driver.get(page("index.html"))
    assert driver.find_element(By.CSS_SELECTOR, "#main").get_dom_attribute("id") == "main"
    assert driver.find_element(By.ID, "heading").text == "The index page"  # Selenium sends [id="heading"]
    assert [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".item")] == ["one", "two", "three", "four"]
    assert [e.text for e in driver.find_elements(By.CLASS_NAME, "item")] == ["one", "two", "three", "four"]
    assert [e.text for e in driver.find_elements(By.CSS_SELECTOR, "ul .item")] == ["one", "two", "three"]
    assert [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#list > li.special")] == ["two"]
    assert [e.text for e in driver.find_elements(By.CSS_SELECTOR, "li[data-x]")] == ["two"]
    assert [e.text for e in driver.find_elements(By.CSS_SELECTOR, "li[data-x=\"2\"]")] == ["two"]
    assert [e.tag_name for e in driver.find_elements(By.CSS_SELECTOR, "h1, input")] == ["h1", "input"]
    assert driver.find_element(By.NAME, "username").get_dom_attribute("id") == "name"
    assert len(driver.find_elements(By.TAG_NAME, "li")) == 3
    assert driver.find_elements(By.TAG_NAME, "table") == []
    # The same element gets the same reference.
    assert driver.find_element(By.ID, "main") == driver.find_element(By.CSS_SELECTOR, "div.box")


def test_find_elements_from_an_element(driver):
    driver.get(page("index.html"))
    lst = driver.find_element(By.ID, "list")
    assert [e.text for e in lst.find_elements(By.TAG_NAME, "li")] == ["one", "two", "three"]
    assert lst.find_element(By.CSS_SELECTOR, ".special").text == "two"
    # Only the element's descendants.
    assert lst.find_elements(By.CSS_SELECTOR, "span") == []
    with pytest.raises(NoSuchElementException):
        lst.find_element(By.ID, "heading")


def test_no_such_element(driver):
    driver.get(page("index.html"))
    with pytest.raises(NoSuchElementException):
        driver.find_element(By.CSS_SELECTOR, "#nope")
    with pytest.raises(NoSuchElementException):
        driver.find_element(By.TAG_NAME, "table")


def test_find_by_tag_name_ignores_case(driver):
    # getElementsByTagName and CSS type selectors match HTML elements whatever the case.
    driver.get(page("index.html"))
    assert len(driver.find_elements(By.TAG_NAME, "LI")) == 3
    assert len(driver.find_elements(By.CSS_SELECTOR, "UL > LI")) == 3


def test_find_by_link_text(driver):
    driver.get(page("index.html"))
    links = driver.find_elements(By.TAG_NAME, "a")
    assert links, "index.html has a link"
    text = links[0].text
    assert driver.find_element(By.LINK_TEXT, text) == links[0]
    assert driver.find_element(By.PARTIAL_LINK_TEXT, text[1:-1]) == links[0]
    assert driver.find_elements(By.LINK_TEXT, text + " and more") == []


def test_invalid_and_unsupported_selectors(driver):
    driver.get(page("index.html"))
    with pytest.raises(InvalidSelectorException):
        driver.find_element(By.CSS_SELECTOR, "p[[[")
    with pytest.raises(WebDriverException) as e:
        driver.find_element(By.XPATH, "//p")
    assert "xpath" in e.value.msg
    status, answer = raw("POST", f"/session/{driver.session_id}/elements", {"using": "xpath", "value": "//p"})
    assert (status, answer["value"]["error"]) == (500, "unsupported operation")


def test_implicit_wait_finds_a_late_element(driver):
    driver.get(page("index.html"))
    driver.execute_script("setTimeout(() => {"
                          " const p = document.createElement('p'); p.id = 'late'; p.textContent = 'late';"
                          " document.body.appendChild(p); }, 300)")
    driver.implicitly_wait(20)
    assert driver.find_element(By.ID, "late").text == "late"


def test_stale_element_references(driver):
    driver.get(page("index.html"))
    main = driver.find_element(By.ID, "main")
    driver.execute_script("arguments[0].remove()", main)
    with pytest.raises(StaleElementReferenceException):
        main.text
    with pytest.raises(StaleElementReferenceException):
        driver.execute_script("return arguments[0]", main)
    # An element of a document navigated away from is stale too
    # (https://w3c.github.io/webdriver/#dfn-get-a-known-element: its node document is no
    # longer the active document), as in Chrome and Firefox: Selenium's staleness_of() waits
    # on this.
    heading = driver.find_element(By.ID, "heading")
    driver.get(page("second.html"))
    with pytest.raises(StaleElementReferenceException):
        heading.text


def test_element_text_attributes_properties_and_tag_name(driver):
    driver.get(page("index.html"))
    main = driver.find_element(By.ID, "main")
    assert main.text == "Hello WebDriver!"
    assert main.tag_name == "div"
    assert main.get_dom_attribute("class") == "box greeting"
    assert main.get_dom_attribute("missing") is None
    assert main.get_property("id") == "main"
    assert main.get_property("className") == "box greeting"
    assert main.get_property("tagName") == "DIV"
    assert main.get_property("textContent") == "Hello WebDriver!"
    assert main.get_property("noSuchProperty") is None
    # A property is the live value, an attribute the markup's.
    driver.execute_script("arguments[0].className = 'changed'", main)
    assert main.get_property("className") == "changed"
    assert main.get_dom_attribute("class") == "changed"
    name = driver.find_element(By.ID, "name")
    assert name.tag_name == "input"
    assert name.get_dom_attribute("name") == "username"
    assert name.get_dom_attribute("value") == "initial"
    assert driver.find_element(By.ID, "to-second").get_dom_attribute("href") == "second.html"
    # Get Element Text is the element's innerText; Servo 0.7.0's puts no line break
    # between the items of a list.
    assert driver.find_element(By.ID, "list").text == ("one two three" if ENGINE == "servo" else "one\ntwo\nthree")


def test_element_property_of_an_input_and_a_link(driver):
    # HTMLInputElement's value and HTMLAnchorElement's href: the properties a WebDriver test
    # reads most.
    driver.get(page("index.html"))
    name = driver.find_element(By.ID, "name")
    assert name.get_property("value") == "initial"
    driver.execute_script("arguments[0].value = 'typed'", name)
    assert name.get_property("value") == "typed"
    assert name.get_dom_attribute("value") == "initial"
    assert driver.find_element(By.ID, "to-second").get_property("href") == page("second.html")


def test_get_attribute_runs_seleniums_atom(driver):
    # Selenium's get_attribute runs its getAttribute atom through Execute Script.
    driver.get(page("index.html"))
    name = driver.find_element(By.ID, "name")
    assert name.get_attribute("name") == "username"
    assert name.get_attribute("value") == "initial"
    assert driver.find_element(By.ID, "main").get_attribute("class") == "box greeting"
    assert driver.find_element(By.ID, "to-second").get_attribute("href") == page("second.html")


def test_element_click_dispatches_the_mouse_events(driver):
    driver.get(page("index.html"))
    button = driver.find_element(By.ID, "counter")
    button.click()
    events = driver.execute_script("return clickEvents")
    assert [e["type"] for e in events] == ["mouseover", "mousemove", "mousedown", "mouseup", "click"]
    assert all(e["isTrusted"] is True for e in events)
    assert all(e["mouseEvent"] is True for e in events)
    button.click()
    assert driver.execute_script("return [clicks, bubbled]") == [2, 2]


# --- frames ------------------------------------------------------------------------------------

def test_switch_to_a_same_origin_frame(driver):
    driver.get(page("frames.html"))
    driver.switch_to.frame(0)
    where = driver.find_element(By.ID, "where")
    assert where.text == "inside the frame"
    assert where.get_dom_attribute("data-origin") == PAGES
    assert driver.execute_script("return location.search") == "?same"
    # Title and current URL stay the top-level document's.
    assert driver.title == "jsprof WebDriver: frames"
    assert driver.current_url == page("frames.html")
    driver.switch_to.parent_frame()
    assert driver.find_element(By.ID, "where").text == "the top-level document"
    driver.switch_to.frame(driver.find_element(By.ID, "same"))
    assert driver.execute_script("return location.search") == "?same"
    driver.switch_to.default_content()
    assert driver.execute_script("return location.href") == page("frames.html")


def test_switch_to_a_cross_origin_frame(driver):
    driver.get(page("frames.html"))
    # The top document cannot reach into it, WebDriver can.
    with pytest.raises(JavascriptException):
        driver.execute_script("return document.getElementById('cross').contentWindow.document.title")
    driver.switch_to.frame(1)
    assert driver.execute_script("return location.origin") == PAGES2
    assert driver.find_element(By.ID, "where").get_dom_attribute("data-origin") == PAGES2
    assert "inside the frame" in driver.page_source
    driver.switch_to.parent_frame()
    driver.switch_to.frame(driver.find_element(By.CSS_SELECTOR, "iframe#cross"))
    assert driver.execute_script("return location.search") == "?cross"
    assert driver.find_element(By.TAG_NAME, "p").text == "inside the frame"
    driver.switch_to.default_content()
    assert driver.find_element(By.ID, "where").text == "the top-level document"


def test_switch_to_a_missing_frame(driver):
    driver.get(page("frames.html"))
    with pytest.raises(NoSuchFrameException):
        driver.switch_to.frame(5)
    with pytest.raises(NoSuchFrameException):
        driver.switch_to.frame(driver.find_element(By.ID, "where"))


# --- the window --------------------------------------------------------------------------------

def test_window_handles_and_rect(driver):
    handle = driver.current_window_handle
    assert driver.window_handles == [handle]
    driver.switch_to.window(handle)
    rect = driver.get_window_rect()
    assert set(rect) >= {"x", "y", "width", "height"}
    assert driver.set_window_rect(x=10, y=20, width=800, height=600) == {"x": 10, "y": 20, "width": 800, "height": 600}
    assert driver.get_window_rect() == {"x": 10, "y": 20, "width": 800, "height": 600}
    assert driver.get_window_size() == {"width": 800, "height": 600}


def visibility_state(driver):
    return driver.execute_script("return [document.visibilityState, document.hidden]")


def test_minimize_and_maximize_change_visibility(driver):
    driver.get(page("visibility.html"))
    assert visibility_state(driver) == ["visible", False]
    driver.minimize_window()
    assert visibility_state(driver) == ["hidden", True]
    driver.minimize_window()  # already hidden: no second event
    driver.maximize_window()
    assert visibility_state(driver) == ["visible", False]
    driver.minimize_window()
    driver.set_window_rect(width=1024, height=768)
    assert visibility_state(driver) == ["visible", False]
    driver.minimize_window()
    driver.fullscreen_window()
    assert visibility_state(driver) == ["visible", False]
    events = driver.execute_script("return visibility")
    assert [(e["state"], e["hidden"]) for e in events] == [
        ("hidden", True), ("visible", False), ("hidden", True), ("visible", False), ("hidden", True), ("visible", False)]


def test_minimized_window_stays_hidden_across_navigation(driver):
    driver.get(page("visibility.html"))
    driver.minimize_window()
    driver.get(page("index.html"))
    assert visibility_state(driver) == ["hidden", True]
    driver.maximize_window()
    assert visibility_state(driver) == ["visible", False]


def test_hidden_page_profiler_takes_no_samples(driver):
    driver.get(page("visibility.html"))
    assert driver.execute_script("return startProfiling()") >= 10
    phases = {"before": driver.execute_script("return runPhase('before', 400)")}
    driver.minimize_window()
    phases["hidden"] = driver.execute_script("return runPhase('hidden', 400)")
    driver.maximize_window()
    phases["after"] = driver.execute_script("return runPhase('after', 400)")
    trace = driver.execute_script("return profiler.stop()")
    events = driver.execute_script("return visibility")
    assert [e["state"] for e in events] == ["hidden", "visible"]
    hide, show = events[0]["t"], events[1]["t"]
    assert phases["before"]["end"] <= hide <= phases["hidden"]["start"]
    assert phases["hidden"]["end"] <= show <= phases["after"]["start"]

    stamps = [s["timestamp"] for s in trace["samples"]]
    assert stamps == sorted(stamps)
    # The sessions were paused from before `hide` (Minimize pauses them at once, then the
    # page's listener runs) until after the hidden phase's work ended (Maximize came after
    # it). Not until `show`: the listener sees Maximize later than the sessions do, how much
    # later depends on the machine's load, and a sample may come in between. Timestamps are
    # coarsened to 100 us.
    paused_until = phases["hidden"]["end"]
    inside = [t for t in stamps if hide + 0.1 < t < paused_until]
    assert inside == [], f"samples while hidden (from {hide} to at least {paused_until} ms): {inside}"
    named = {name for s in trace["samples"] for name, _ in frame_names(trace, s)}
    assert "workWhileHidden" not in named
    # The visible phases were sampled (400 ms of work each at a 10 ms interval; base 20 ms).
    before = [t for t in stamps if phases["before"]["start"] <= t <= hide + 0.1]
    after = [t for t in stamps if t >= phases["after"]["start"]]
    print(f"hidden {hide:.1f}..{show:.1f} ms; samples: {len(before)} before, {len(after)} after, "
          f"{len(stamps)} in all; phases {phases}")
    assert len(before) >= 3, f"only {len(before)} samples before hiding"
    assert len(after) >= 3, f"only {len(after)} samples after showing"
    assert {"workBefore", "workAfter"} <= named


# --- Force Sample ------------------------------------------------------------------------------

def test_force_sample_while_the_page_script_runs(driver):
    driver.get(page("forcesample.html"))
    assert release("reset-release") == "ok"
    assert driver.execute_script("return startProfiler(arguments[0], 100)", FORCE_ONLY_INTERVAL) is True
    assert driver.execute_script("return profiler.sampleInterval") == FORCE_ONLY_INTERVAL
    # Returns at once; holdUntilReleased() runs in the next task and blocks the page.
    driver.execute_script("setTimeout(startHolding, 0); return true")
    assert release("release/entered", timeout=30) == "yes", "holdUntilReleased() never polled /release"
    for _ in range(5):
        assert force_sample(driver) is None
        time.sleep(0.02)
    assert release("release/go") == "ok"
    got = driver.execute_script("return released.then(async (polls) => ({polls, trace: await profiler.stop()}))")
    assert got["polls"] >= 1
    trace = got["trace"]
    assert len(trace["samples"]) == 5, trace["samples"]
    stamps = [s["timestamp"] for s in trace["samples"]]
    assert all(a < b for a, b in zip(stamps, stamps[1:])), stamps
    for sample in trace["samples"]:
        frames = frame_names(trace, sample)
        pages_frames = [name for name, url in frames if url and url.startswith(page("forcesample.html"))]
        assert pages_frames, f"no frame of the page in {frames}"
        assert pages_frames[0] == "holdUntilReleased", frames
        assert "startHolding" in pages_frames


def test_force_sample_without_a_profiler_is_a_no_op(driver):
    assert force_sample(driver) is None  # about:blank
    driver.get(page("index.html"))
    assert force_sample(driver) is None
    status, answer = raw("POST", f"/session/{driver.session_id}/forcesample", {})
    assert (status, answer) == (200, {"value": None})


def test_force_sample_into_a_full_buffer(driver):
    driver.get(page("forcesample.html"))
    assert driver.execute_script("return startProfiler(arguments[0], 2)", FORCE_ONLY_INTERVAL) is True
    for _ in range(3):
        assert force_sample(driver) is None
    # samplebufferfull, fired once the third found the buffer full.
    assert driver.execute_script("return full") == 1
    trace = driver.execute_script("return profiler.stop()")
    assert len(trace["samples"]) == 2
    assert driver.execute_script("return fullEvents") == 1


def test_force_sample_while_minimized_takes_none(driver):
    driver.get(page("forcesample.html"))
    assert driver.execute_script("return startProfiler(arguments[0], 100)", FORCE_ONLY_INTERVAL) is True
    driver.minimize_window()
    assert force_sample(driver) is None
    assert force_sample(driver) is None
    driver.maximize_window()
    assert force_sample(driver) is None
    trace = driver.execute_script("return profiler.stop()")
    assert len(trace["samples"]) == 1, trace["samples"]


def test_force_sample_only_samples_the_current_browsing_context(driver):
    # A profiler of the top-level document; while a frame is the current browsing context,
    # Force Sample samples the frame's sessions (none), not the top-level document's.
    driver.get(page("frames.html"))
    driver.execute_script("window.p = new Profiler({sampleInterval: arguments[0], maxBufferSize: 100})",
                          FORCE_ONLY_INTERVAL)
    driver.switch_to.frame(0)
    assert force_sample(driver) is None
    assert force_sample(driver) is None
    driver.switch_to.default_content()
    assert force_sample(driver) is None
    trace = driver.execute_script("return p.stop()")
    assert len(trace["samples"]) == 1, trace["samples"]


# --- what jsprof does not do -------------------------------------------------------------------

def test_unsupported_command(driver):
    driver.get(page("index.html"))
    with pytest.raises(WebDriverException) as e:
        driver.get_screenshot_as_png()
    assert "does not render" in e.value.msg or "unsupported operation" in e.value.msg
    status, answer = raw("GET", f"/session/{driver.session_id}/screenshot")
    assert status == 500
    assert answer["value"]["error"] == "unsupported operation"


def test_unknown_session_id():
    status, answer = raw("GET", "/session/not-a-session/url")
    assert status == 404
    assert answer["value"]["error"] == "invalid session id"
