// The device page: an operator approves the user code an agent CLI shows
// (`aop setup`). The admin key stays in this tab's sessionStorage, as on
// /jobs; ?code= fills the code in.
(() => {
  "use strict";
  const { $, savedKey, saveKey } = window.agora; // console.js
  const keyInput = $("key"), codeInput = $("code"), notice = $("notice"), request = $("request"), approve = $("approve");
  keyInput.value = savedKey();
  codeInput.value = new URLSearchParams(location.search).get("code") || "";

  function say(text, kind) {
    notice.textContent = text;
    notice.className = "notice " + (kind || "");
    notice.hidden = !text;
  }

  // api calls the API with the key in the form.
  function api(method, path) {
    return window.agora.api(method, path, undefined, keyInput.value.trim());
  }

  function code() {
    return codeInput.value.trim().toUpperCase();
  }

  function show(login) {
    $("agent").textContent = login.agentName;
    $("model").textContent = login.agentModel || "—";
    $("scopes").textContent = login.scopes.join(", ") || "none";
    const status = login.expired ? "expired" : login.status;
    $("status").textContent = status;
    $("status").className = "status-" + status;
    $("expires").textContent = window.agora.clock(login.expiresAt, true);
    approve.disabled = status !== "pending";
    request.hidden = false;
  }

  $("lookup").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    saveKey(keyInput.value.trim());
    say("");
    request.hidden = true;
    try {
      show(await api("GET", "/api/v1/auth/device-codes/" + encodeURIComponent(code())));
    } catch (err) {
      say(err.message, "error");
    }
  });

  approve.addEventListener("click", async () => {
    try {
      const login = await api("POST", "/api/v1/auth/device-codes/" + encodeURIComponent(code()) + "/approve");
      show(login);
      say("Approved: " + login.agentName + " receives its key at its next poll.", "ok");
    } catch (err) {
      say(err.message, "error");
    }
  });
})();
