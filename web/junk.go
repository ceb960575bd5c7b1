package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leadsignal/leadsignal/internal/capture"
	"github.com/leadsignal/leadsignal/internal/junk"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/views"
)

// thresholdLabels names the threshold of the signals that have one.
var thresholdLabels = map[junk.Signal]string{
	junk.TooFast:   "Faster than (seconds)",
	junk.Duplicate: "Within (days)",
	junk.FakePhone: "Fewer national digits than",
}

func hasKeywords(sig junk.Signal) bool {
	return sig == junk.VendorPitch || sig == junk.JobApplication
}

// junkForm shows an account's junk settings.
func junkForm(a models.Account) (views.JunkForm, error) {
	settings, err := capture.JunkSettings(a)
	if err != nil {
		return views.JunkForm{}, err
	}
	var f views.JunkForm
	for _, sig := range junk.Signals {
		st := settings[sig]
		label, help := junk.Describe(sig)
		row := views.JunkRow{Signal: string(sig), Label: label, Help: help, Enabled: st.Enabled}
		if l, ok := thresholdLabels[sig]; ok {
			row.Threshold = views.Field{Name: "threshold_" + string(sig), Label: l, Type: "text",
				Value: strconv.FormatFloat(st.Threshold, 'f', -1, 64)}
		}
		if hasKeywords(sig) {
			kws := st.Keywords
			hint := "One phrase a line. Empty: the built-in list for English, Spanish, Portuguese, German, French and Turkish."
			if len(kws) == 0 {
				kws = junk.DefaultKeywords(sig)
			}
			row.Keywords = views.Field{Name: "keywords_" + string(sig), Label: "Phrases", Value: strings.Join(kws, "\n"), Hint: hint}
		}
		f.Rows = append(f.Rows, row)
	}
	return f, nil
}

func (h *Handler) renderJunk(c echo.Context, status int, f views.JunkForm) error {
	return render(c, status, views.JunkPage(h.settingsPage(c, "Junk signals"), f))
}

// showJunk is the settings' junk signals section; it says so once after
// they were saved.
func (h *Handler) showJunk(c echo.Context) error {
	f, err := junkForm(currentAccount(c).Account)
	if err != nil {
		return err
	}
	sess := session(c)
	if _, ok := sess.Values[keyJunkSaved]; ok {
		f.Saved = true
		delete(sess.Values, keyJunkSaved)
		c.Set(ctxDirty, true)
	}
	return h.renderJunk(c, http.StatusOK, f)
}

func (h *Handler) updateJunk(c echo.Context) error {
	a := currentAccount(c)
	form, err := junkForm(a.Account)
	if err != nil {
		return err
	}
	settings := junk.Settings{}
	invalid := false
	for i, sig := range junk.Signals {
		row := &form.Rows[i]
		st := junk.Setting{Enabled: c.FormValue("enabled_"+string(sig)) == "1"}
		row.Enabled = st.Enabled
		if row.Threshold.Name != "" {
			raw := strings.TrimSpace(c.FormValue(row.Threshold.Name))
			row.Threshold.Value = raw
			n, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				row.Threshold.Error = "Enter a number."
				invalid = true
			}
			st.Threshold = n
		}
		if row.Keywords.Name != "" {
			raw := c.FormValue(row.Keywords.Name)
			row.Keywords.Value = raw
			var kws []string
			for _, line := range strings.Split(raw, "\n") {
				if line = strings.TrimSpace(line); line != "" {
					kws = append(kws, line)
				}
			}
			// The built-in list shown unchanged is stored as "use the
			// built-in list", so it keeps up with improvements.
			if !equalStrings(kws, junk.DefaultKeywords(sig)) {
				st.Keywords = kws
			}
		}
		settings[sig] = st
	}
	for sig, msg := range settings.Validate() {
		for i := range form.Rows {
			r := &form.Rows[i]
			if r.Signal != string(sig) {
				continue
			}
			if r.Keywords.Name != "" && r.Threshold.Name == "" {
				r.Keywords.Error = msg
			} else if r.Threshold.Error == "" {
				r.Threshold.Error = msg
			}
			invalid = true
		}
	}
	if invalid {
		return h.renderJunk(c, http.StatusUnprocessableEntity, form)
	}
	b, err := json.Marshal(settings)
	if err != nil {
		return err
	}
	if err := h.store.UpdateJunkSettings(c.Request().Context(), a.ID, string(b)); err != nil {
		return err
	}
	session(c).Values[keyJunkSaved] = true
	if err := saveSession(c); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, views.SettingsURL(a.ID, views.SettingsJunk))
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
