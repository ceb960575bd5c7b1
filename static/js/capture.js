/*! leadsignal capture.js v1 (docs/capture-js.md) */
(function (w, d) {
  "use strict";
  var me = d.currentScript;
  if (!me || (w.leadsignal && w.leadsignal.version)) return;
  var key = me.getAttribute("data-key") || "";
  var base = new URL(me.src, location.href).origin + "/api/v1/collect";
  var CLICK = ["fbclid", "gclid", "gbraid", "wbraid", "ttclid", "epik", "li_fat_id", "msclkid"];
  var STD = { email: 1, phone: 1, first_name: 1, last_name: 1, city: 1, state: 1, zip: 1, country: 1, message: 1 };
  var callbacks = [], pixels = [], sessions = new WeakMap();

  function get(k) { try { return JSON.parse(sessionStorage.getItem("leadsignal_" + k)); } catch (e) { return null; } }
  function put(k, v) { try { sessionStorage.setItem("leadsignal_" + k, JSON.stringify(v)); } catch (e) {} }

  // The landing: its click ids and time, kept for the session; a later
  // page with new click ids starts a new landing.
  var land = get("landing"), q = new URLSearchParams(location.search), ids = {}, found = false;
  CLICK.forEach(function (k) { var v = q.get(k); if (v) { ids[k] = v.slice(0, 500); found = true; } });
  if (found || !land) { land = { t: Date.now(), ids: ids }; put("landing", land); }

  function cookie(name) {
    var m = d.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return m ? decodeURIComponent(m[1]) : "";
  }
  function hex(bytes) {
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  // The forms it captures: every form with an email or phone field, or
  // only data-leadsignal forms when the script or a form says so.
  function marked() { return me.getAttribute("data-forms") === "marked" || !!d.querySelector("form[data-leadsignal]"); }
  // What a field is, by its type, its autocomplete token, then the words
  // of its name and id ("your-email", "form_fields[name]", "firstname").
  var AUTO = { email: "email", tel: "phone", "given-name": "first_name", "family-name": "last_name", name: "name",
    "address-level2": "city", "address-level1": "state", "postal-code": "zip", country: "country", "country-name": "country" };
  var WORDS = [["email", /^e?-?mail$|^email/], ["phone", /^(phone|tel|telephone|mobile|cell|handy|telefon)/],
    ["first_name", /^(first|firstname|fname|given|vorname)$/], ["last_name", /^(last|lastname|lname|family|surname|nachname)$/],
    ["city", /^(city|town|ort|stadt)$/], ["zip", /^(zip|zipcode|postal|postcode|plz)$/], ["country", /^(country|land)$/],
    ["state", /^(state|region|province)$/], ["name", /^(name|fullname)$/],
    ["message", /^(message|comments?|notes?|enquiry|inquiry|nachricht)$/]];
  function kind(el) {
    var t = (el.type || "").toLowerCase(), auto = (el.getAttribute("autocomplete") || "").toLowerCase().split(" ").pop();
    var words = (el.name + " " + el.id).toLowerCase().split(/[^a-z0-9]+/), i, j;
    if (t === "password" || t === "file" || t === "hidden" || t === "submit" || t === "button" || /^cc-/.test(auto) ||
      words.some(function (w) { return /^(card|cc|cvc|cvv|iban|password|ssn)/.test(w); })) return "";
    if (t === "email") return "email";
    if (t === "tel") return "phone";
    if (AUTO[auto]) return AUTO[auto];
    for (i = 0; i < WORDS.length; i++) for (j = 0; j < words.length; j++) if (WORDS[i][1].test(words[j])) {
      // "company_name" is no person's name.
      if (WORDS[i][0] === "name" && words.some(function (w) { return /^(company|business|organi[sz]ation|org|firma|firm|brand|file|user|username)$/.test(w); })) return "field";
      return WORDS[i][0];
    }
    return el.tagName === "TEXTAREA" ? "message" : "field";
  }
  function session(form) {
    if (!form || form.tagName !== "FORM" || (marked() && !form.hasAttribute("data-leadsignal"))) return null;
    var s = sessions.get(form);
    if (s) return s;
    var has = Array.prototype.some.call(form.elements, function (el) { var k = kind(el); return k === "email" || k === "phone"; });
    if (!has) return null;
    var r = new Uint8Array(16);
    crypto.getRandomValues(r);
    s = { id: "ls_" + hex(r), start: 0, sent: "", ids: {} };
    sessions.set(form, s);
    var hp = d.createElement("input");
    hp.type = "text"; hp.name = "ls_hp"; hp.tabIndex = -1; hp.autocomplete = "off";
    hp.setAttribute("aria-hidden", "true");
    hp.style.cssText = "position:absolute;left:-9999px;width:1px;height:1px;opacity:0";
    form.appendChild(hp);
    s.hp = hp;
    eventIDs(s);
    return s;
  }
  // The Lead's event id per pixel, computed ahead: on submit the page may
  // move on before a digest would end.
  function eventIDs(s) {
    if (!w.crypto || !crypto.subtle) return;
    pixels.forEach(function (p) {
      if (s.ids[p]) return;
      crypto.subtle.digest("SHA-256", new TextEncoder().encode(p + "|Lead|" + s.id)).then(function (h) { s.ids[p] = hex(new Uint8Array(h)); });
    });
  }

  function lead(form, s, partial) {
    var p = { external_id: s.id, partial: partial, event_source_url: location.href, fields: {} };
    Array.prototype.forEach.call(form.elements, function (el) {
      var k = kind(el), v = (el.type === "checkbox" || el.type === "radio") ? (el.checked ? el.value : "") : el.value;
      if (!k || !v || !el.name || el === s.hp) return;
      v = String(v).slice(0, 2000);
      if (k === "name") {
        // A full name: its first word is the first name, the rest the last.
        var parts = v.trim().split(/\s+/);
        if (!p.first_name) p.first_name = parts.shift();
        if (!p.last_name && parts.length) p.last_name = parts.join(" ");
      } else if (STD[k] && !p[k]) p[k] = v;
      else if (Object.keys(p.fields).length < 30) p.fields[el.name.slice(0, 100)] = v;
    });
    CLICK.forEach(function (k) { if (land.ids[k]) p[k] = land.ids[k]; });
    // The _fbc cookie as it is, unless the visit's landing carries a newer
    // fbclid than its own (meta-capi.md, "Building fbc yourself").
    var fbc = cookie("_fbc"), fbp = cookie("_fbp"), own = fbc.split(".")[3];
    if (fbc && (!land.ids.fbclid || own === land.ids.fbclid)) p.fbc = fbc;
    else if (land.ids.fbclid) p.fbc = "fb.1." + land.t + "." + land.ids.fbclid;
    if (fbp) p.fbp = fbp;
    if (s.start) p.fill_seconds = Math.round((Date.now() - s.start) / 100) / 10;
    p.honeypot = s.hp.value;
    return p;
  }
  function post(p, done) {
    var url = base + "?key=" + encodeURIComponent(key), body = JSON.stringify(p);
    if (w.fetch) {
      fetch(url, { method: "POST", body: body, keepalive: true, mode: "cors", credentials: "omit", headers: { "Content-Type": "text/plain" } })
        .then(function (r) { return r.json(); }).then(function (j) { if (done && j && j.lead_id) done(j); })["catch"](function () {});
    } else if (navigator.sendBeacon) {
      navigator.sendBeacon(url, new Blob([body], { type: "text/plain" }));
    }
  }
  function usable(el) {
    var k = kind(el), v = (el.value || "").trim();
    return (k === "email" && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v)) || (k === "phone" && v.replace(/\D/g, "").length >= 7);
  }

  d.addEventListener("input", function (e) { var s = session(e.target.form); if (s && !s.start) s.start = Date.now(); }, true);
  // A partial lead when an email or phone field is left with a usable value.
  d.addEventListener("focusout", function (e) {
    var el = e.target, s = session(el.form);
    if (!s || !usable(el) || s.done) return;
    var p = lead(el.form, s, true), sig = (p.email || "") + "|" + (p.phone || "");
    if (sig === s.sent) return;
    s.sent = sig;
    post(p);
  }, true);
  // The complete lead on submit, never delaying the form's own submit; the
  // pixel's Lead first, with the server event's event id.
  d.addEventListener("submit", function (e) {
    var form = e.target, s = session(form);
    if (!s) return;
    s.done = true;
    try {
      if (typeof w.fbq === "function") pixels.forEach(function (p) { if (s.ids[p]) w.fbq("trackSingle", p, "Lead", {}, { eventID: s.ids[p] }); });
    } catch (err) {}
    post(lead(form, s, false), function (j) { callbacks.forEach(function (cb) { try { cb(j); } catch (err) {} }); });
  }, true);

  if (w.fetch) {
    fetch(base + "/config?key=" + encodeURIComponent(key), { mode: "cors", credentials: "omit" })
      .then(function (r) { return r.json(); })
      .then(function (c) {
        pixels = (c && c.pixels) || [];
        Array.prototype.forEach.call(d.forms, function (f) { var s = sessions.get(f); if (s) eventIDs(s); });
      })["catch"](function () {});
  }

  w.leadsignal = { version: "1", onLead: function (cb) { if (typeof cb === "function") callbacks.push(cb); } };
})(window, document);
