// leadsignal's few behaviours beyond htmx. The CSP allows no inline script,
// so they live here and find their elements by attribute.
(function () {
  "use strict";

  // Filter bars apply as they change: their Apply button is for pages
  // without JavaScript (app.css hides it under .js).
  document.documentElement.classList.add("js");

  // A filter bar folded on a phone opens and closes behind its button.
  document.addEventListener("click", function (e) {
    var toggle = e.target.closest(".filters-toggle");
    if (toggle) {
      var open = toggle.closest("form").classList.toggle("open");
      toggle.setAttribute("aria-expanded", String(open));
      return;
    }
    // A copy button copies the text of the element it names.
    var copy = e.target.closest("[data-copy]");
    if (copy) {
      var source = document.getElementById(copy.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) return;
      navigator.clipboard.writeText(source.textContent.trim()).then(function () {
        var was = copy.textContent;
        copy.textContent = "Copied";
        setTimeout(function () { copy.textContent = was; }, 1500);
      });
    }
  });

  // After a filter bar applied in place, its folded button counts the
  // filters now set, as the server does on a full page.
  document.addEventListener("htmx:afterRequest", function (e) {
    var form = e.detail.elt && e.detail.elt.closest && e.detail.elt.closest("form.filter-bar");
    var toggle = form && form.querySelector(".filters-toggle");
    if (!toggle) return;
    var set = 0;
    form.querySelectorAll("select, input:not([type=hidden])").forEach(function (f) {
      if (f.value !== "") set++;
    });
    var badge = toggle.querySelector(".badge");
    if (set === 0) {
      if (badge) badge.remove();
      return;
    }
    if (!badge) {
      badge = document.createElement("span");
      badge.className = "badge";
      toggle.appendChild(badge);
    }
    badge.textContent = String(set);
  });

  // The account tabs scroll sideways on a phone: show the current one, and
  // mark which ends have more tabs past them.
  function tabs() {
    var nav = document.querySelector("nav.account-nav");
    if (!nav) return;
    var current = nav.querySelector('[aria-current="page"]');
    if (current && nav.scrollWidth > nav.clientWidth) {
      nav.scrollLeft = current.offsetLeft - (nav.clientWidth - current.offsetWidth) / 2;
    }
    function edges() {
      nav.classList.toggle("more-left", nav.scrollLeft > 2);
      nav.classList.toggle("more-right", nav.scrollLeft + nav.clientWidth < nav.scrollWidth - 2);
    }
    nav.addEventListener("scroll", edges, { passive: true });
    window.addEventListener("resize", edges);
    edges();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", tabs);
  } else {
    tabs();
  }
})();
