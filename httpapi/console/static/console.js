// What every console page shares, loaded before the page's own script:
// window.agora, with the DOM helpers, the API key of the tab and the form
// that asks for it, the one fetch wrapper every page calls the API with,
// and the event stream read with a key. Everything from the network is
// shown with textContent: el() is how the pages build markup.
window.agora = (function () {
  "use strict";

  // $ returns the element of the page with that id.
  const $ = (id) => document.getElementById(id);

  // el makes an element of tag with class cls and, if given, text.
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // clock writes a moment (a Date, milliseconds or an ISO string) in the
  // reader's locale on a 24-hour clock: "14:05:09", or with the date when
  // withDate is set. Every page writes times with it.
  function clock(when, withDate) {
    const d = new Date(when);
    if (isNaN(d)) return "";
    const opts = { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" };
    if (withDate) Object.assign(opts, { year: "numeric", month: "short", day: "numeric" });
    return d.toLocaleString(undefined, opts);
  }

  // setLive shows the state of the page's stream in its #live badge.
  function setLive(on, text) {
    $("live").className = "live" + (on ? " on" : "");
    $("live").textContent = text;
  }

  // askKey shows the page's #keyform: the server wants a key
  // (refused: it refused the one sent).
  function askKey(refused) {
    $("keyform").hidden = false;
    setLive(false, refused ? "○ key refused" : "○ key needed");
  }

  // savedKey is the API key kept in this tab's sessionStorage, shared by
  // every console page.
  function savedKey() {
    return sessionStorage.getItem("agora.apiKey") || "";
  }

  function saveKey(k) {
    sessionStorage.setItem("agora.apiKey", k);
  }

  // key returns the API key of this tab: kept in sessionStorage, set by a
  // "#key=" fragment (then removed from the address bar) or by the page's
  // #keyform, which reloads the page with the new key.
  function key() {
    let k = savedKey();
    const m = location.hash.match(/^#key=(.+)$/);
    if (m) {
      k = decodeURIComponent(m[1]);
      saveKey(k);
      history.replaceState(null, "", location.pathname + location.search);
    }
    $("keyform").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const entered = $("key").value.trim();
      if (!entered) return;
      saveKey(entered);
      location.reload();
    });
    return k;
  }

  // api sends method path to the server, body (when given) as JSON and
  // apiKey (when set) as a Bearer key, and returns the JSON answer. An
  // answer that is not 2xx throws an Error with the server's message and
  // the answer's status.
  async function api(method, path, body, apiKey) {
    const opts = { method, headers: {} };
    if (apiKey) opts.headers.Authorization = "Bearer " + apiKey;
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const res = await fetch(path, opts);
    const data = await res.json().catch(() => ({}));
    if (!res.ok) {
      const err = new Error((data.error && data.error.message) || res.status + " " + res.statusText);
      err.status = res.status;
      throw err;
    }
    return data;
  }

  // stream follows a server-sent event stream that needs an API key:
  // EventSource cannot send an Authorization header, so the stream is read
  // with fetch. onEvent(event, data) is called for every event; onState(state)
  // with "live" once the stream is open, "refused" on a 401 or 403 (then it
  // stops), and "reconnecting" while it waits to try again.
  function stream(url, apiKey, onEvent, onState) {
    (async function () {
      for (;;) {
        try {
          const res = await fetch(url, { headers: { Authorization: "Bearer " + apiKey } });
          if (res.status === 401 || res.status === 403) {
            onState("refused");
            return;
          }
          if (!res.ok) throw new Error(res.statusText);
          onState("live");
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          let buf = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buf += value;
            let i;
            while ((i = buf.indexOf("\n\n")) >= 0) {
              const block = buf.slice(0, i);
              buf = buf.slice(i + 2);
              let event = "message", data = "";
              for (const line of block.split("\n")) {
                if (line.startsWith("event: ")) event = line.slice(7);
                else if (line.startsWith("data: ")) data += line.slice(6);
              }
              onEvent(event, data);
            }
          }
        } catch (e) { /* reconnect below */ }
        onState("reconnecting");
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
  }

  // live is the onState of a stream that shows its state in #live, and
  // asks for another key when the server refuses the one sent.
  function live(state) {
    if (state === "live") setLive(true, "● live");
    else if (state === "reconnecting") setLive(false, "○ reconnecting");
    else askKey(true);
  }

  // follow calls handlers[event](data) for every event of the stream at
  // url that has a handler: with apiKey read with fetch (stream), without
  // one with an EventSource. onState (default: live) hears how the
  // stream is.
  function follow(url, apiKey, handlers, onState) {
    onState = onState || live;
    if (apiKey) {
      stream(url, apiKey, (event, data) => {
        if (Object.hasOwn(handlers, event)) handlers[event](data);
      }, onState);
      return;
    }
    const source = new EventSource(url);
    for (const [event, fn] of Object.entries(handlers)) source.addEventListener(event, (ev) => fn(ev.data));
    source.onopen = () => onState("live");
    source.onerror = () => onState("reconnecting");
  }

  return { $, el, clock, setLive, askKey, savedKey, saveKey, key, api, follow, live };
})();
