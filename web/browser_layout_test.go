//go:build browser

package web_test

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/chromedp"
)

// widths are the screens every page is looked at on: a laptop and a phone.
var widths = []int64{1280, 390}

// eachWidth opens url at each of widths, waits for ready (a CSS selector),
// checks the page is no wider than the screen, saves a screenshot named
// name-<width> and runs check.
func (b *tab) eachWidth(name, url, ready string, check func(width int64)) {
	b.t.Helper()
	for _, w := range widths {
		b.do(chromedp.EmulateViewport(w, 900), chromedp.Navigate(url), visible(ready))
		b.fits(name + " at " + strconv.FormatInt(w, 10) + " px")
		if check != nil {
			check(w)
		}
		b.do(shot(name + "-" + strconv.FormatInt(w, 10)))
	}
	b.do(chromedp.EmulateViewport(1280, 900))
}

// fits fails the test when the page scrolls sideways, naming the elements
// that reach past the screen's right edge.
func (b *tab) fits(what string) {
	b.t.Helper()
	wide := evalJS[[]string](b, `(() => {
		const w = document.documentElement.clientWidth;
		if (document.documentElement.scrollWidth <= w) return [];
		const out = [];
		for (const el of document.querySelectorAll("body *")) {
			const r = el.getBoundingClientRect();
			if (r.width === 0 || r.right <= w + 1) continue;
			let clipped = false;
			for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
				const o = getComputedStyle(p).overflowX;
				if (o !== "visible") { clipped = true; break; }
			}
			if (!clipped) out.push(el.tagName.toLowerCase() + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "") + " right=" + Math.round(r.right));
			if (out.length >= 8) break;
		}
		return out.length ? out : ["document " + document.documentElement.scrollWidth + " > " + w];
	})()`)
	if len(wide) > 0 {
		b.t.Errorf("%s: the page is wider than the screen: %s", what, strings.Join(wide, "; "))
	}
}

// oneLineRows fails the test when a row of the table sel (its tbody rows)
// takes more than one line: a cell's text wraps, or cells stack.
func (b *tab) oneLineRows(what, sel string) {
	b.t.Helper()
	bad := evalJS[[]string](b, fmt.Sprintf(`(() => {
		const out = [];
		document.querySelectorAll(%q).forEach((tr, i) => {
			const rects = [];
			const walk = document.createTreeWalker(tr, NodeFilter.SHOW_TEXT);
			for (let n = walk.nextNode(); n; n = walk.nextNode()) {
				if (!n.textContent.trim()) continue;
				const el = n.parentElement;
				if (el.closest(".visually-hidden") || getComputedStyle(el).display === "none") continue;
				const range = document.createRange();
				range.selectNodeContents(n);
				for (const r of range.getClientRects()) if (r.width > 0) rects.push(r);
			}
			if (!rects.length) return;
			const line = Math.max(...rects.map(r => r.height));
			const spread = Math.max(...rects.map(r => r.bottom)) - Math.min(...rects.map(r => r.top));
			if (spread > line * 1.5) out.push("row " + (i + 1) + " is " + Math.round(spread) + " px tall (a line is " + Math.round(line) + "): " + tr.textContent.replace(/\s+/g, " ").trim().slice(0, 80));
		});
		return out;
	})()`, sel+" tbody tr:not(#load-more)"))
	if len(bad) > 0 {
		b.t.Errorf("%s: rows of %s take more than one line:\n%s", what, sel, strings.Join(bad, "\n"))
	}
}

// above fails the test unless every selector in order is found and each
// starts above the next on the page: the page's reading order.
func (b *tab) above(what string, sels ...string) {
	b.t.Helper()
	tops := evalJS[[]float64](b, fmt.Sprintf(`%s.map(s => { const el = document.querySelector(s); return el ? el.getBoundingClientRect().top + scrollY : -1; })`, jsStrings(sels)))
	for i, top := range tops {
		if top < 0 {
			b.t.Errorf("%s: %s is not on the page", what, sels[i])
			return
		}
		if i > 0 && top <= tops[i-1] {
			b.t.Errorf("%s: %s (at %.0f px) should come below %s (at %.0f px)", what, sels[i], top, sels[i-1], tops[i-1])
		}
	}
}

func jsStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}
