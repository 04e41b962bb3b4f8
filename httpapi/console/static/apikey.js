// What the console pages that send an API key share: the key itself, the
// form that asks for it, and the event stream read with it.

// agoraKey returns the API key of this tab: kept in sessionStorage, set by
// a "#key=" fragment (then removed from the address bar) or by the page's
// #keyform, which reloads the page with the new key.
window.agoraKey = function () {
  "use strict";
  let key = sessionStorage.getItem("agora.apiKey") || "";
  const m = location.hash.match(/^#key=(.+)$/);
  if (m) {
    key = decodeURIComponent(m[1]);
    sessionStorage.setItem("agora.apiKey", key);
    history.replaceState(null, "", location.pathname + location.search);
  }
  document.getElementById("keyform").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const k = document.getElementById("key").value.trim();
    if (!k) return;
    sessionStorage.setItem("agora.apiKey", k);
    location.reload();
  });
  return key;
};

// agoraStream follows a server-sent event stream that needs an API key:
// EventSource cannot send an Authorization header, so the stream is read
// with fetch. onEvent(event, data) is called for every event; onState(state)
// with "live" once the stream is open, "refused" on a 401 or 403 (then it
// stops), and "reconnecting" while it waits to try again.
window.agoraStream = function (url, key, onEvent, onState) {
  "use strict";
  (async function () {
    for (;;) {
      try {
        const res = await fetch(url, { headers: { Authorization: "Bearer " + key } });
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
};
