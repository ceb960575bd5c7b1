package crm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Targets are what a generic connection's mapping may name, each mapped
// to a dotted path in a delivered object. A target the mapping leaves out
// is read from the object's top-level key of its own name (a lead key
// also from "lead.<name>", as the stage API nests them).
var Targets = []string{
	"id", "external_id", "meta_lead_id", "email", "phone",
	"stage", "occurred_at", "value", "currency", "change_id", "object_id",
}

// leadTargets are the Targets that name the lead, in the order it is
// looked up by.
var leadTargets = []string{"id", "external_id", "meta_lead_id", "email", "phone"}

// MaxPath is the longest path a mapping may give.
const MaxPath = 200

// CheckFields checks a generic connection's mapping before it is saved:
// each key is one of Targets and each path is dotted keys (an array
// element by its index, "contacts.0.email"), none of them empty.
func CheckFields(fields map[string]string) error {
	targets := make([]string, 0, len(fields))
	for k := range fields {
		targets = append(targets, k)
	}
	slices.Sort(targets) // the first problem is the same every time
	for _, target := range targets {
		path := fields[target]
		switch {
		case !slices.Contains(Targets, target):
			return fmt.Errorf("%q is not a field leadsignal reads (%s)", target, strings.Join(Targets, ", "))
		case strings.TrimSpace(path) == "":
			return fmt.Errorf("%s: the path is empty", target)
		case len(path) > MaxPath:
			return fmt.Errorf("%s: the path is over %d characters", target, MaxPath)
		case strings.IndexFunc(path, unicode.IsControl) >= 0:
			return fmt.Errorf("%s: the path holds a control character", target)
		case slices.Contains(strings.Split(path, "."), ""):
			return fmt.Errorf("%s: path %q has an empty key (a dot at an end, or two together)", target, path)
		}
	}
	return nil
}

func parseGeneric(body []byte, fields map[string]string) []Change {
	els, err := elements(body)
	if err != nil {
		return []Change{attention(body, "%v", err)}
	}
	changes := make([]Change, 0, len(els))
	for i, el := range els {
		ch, err := genericChange(el, fields)
		if err != nil {
			if len(els) > 1 {
				err = fmt.Errorf("object %d: %w", i, err)
			}
			// Kept, for a person to fix the sender or the mapping:
			// saving the connection reads it again.
			ch = attention(el, "%v", err)
		}
		changes = append(changes, ch)
	}
	return changes
}

func genericChange(raw json.RawMessage, fields map[string]string) (Change, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		return Change{}, err
	}
	var errs []error
	get := func(target string) string {
		if path := fields[target]; path != "" {
			v, err := lookup(obj, path)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", path, err))
			}
			return v
		}
		// Unmapped: the target's own key, read only when it is a
		// string or a number. A top-level "id" is the sender's own (a
		// deal's, an event's) far more often than leadsignal's lead id,
		// which a wrong guess would match to another lead: the lead id is
		// read unmapped only from the stage API's lead.id.
		var v string
		if target != "id" {
			v, _ = lookup(obj, target)
		}
		if v == "" && slices.Contains(leadTargets, target) {
			v, _ = lookup(obj, "lead."+target) // the stage API's shape
		}
		return v
	}
	ch := Change{
		Body:     raw,
		ObjectID: get("object_id"),
		StageID:  get("stage"),
		Currency: get("currency"),
		ChangeID: get("change_id"),
		Lead: LeadRef{
			ID:         get("id"),
			ExternalID: get("external_id"),
			MetaLeadID: get("meta_lead_id"),
			Email:      get("email"),
			Phone:      get("phone"),
		},
	}
	var err error
	if ch.OccurredAt, err = parseTime(get("occurred_at")); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", pathOf(fields, "occurred_at"), err))
	}
	if ch.Value, err = parseValue(get("value")); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", pathOf(fields, "value"), err))
	}
	if ch.StageID == "" {
		errs = append(errs, fmt.Errorf("no stage at %q", pathOf(fields, "stage")))
	}
	if ch.Lead.Empty() {
		var paths []string
		for _, t := range leadTargets {
			paths = append(paths, pathOf(fields, t))
		}
		errs = append(errs, fmt.Errorf("no lead key at any of %s", strings.Join(paths, ", ")))
	}
	if len(errs) > 0 {
		return Change{}, errors.Join(errs...)
	}
	if ch.ChangeID != "" {
		ch.Key = "change:" + ch.ChangeID
	} else {
		ch.Key = "body:" + bodyHash(raw)
	}
	return ch, nil
}

// pathOf is where target is read from.
func pathOf(fields map[string]string, target string) string {
	if p := fields[target]; p != "" {
		return p
	}
	return target
}

// lookup is the string or number at the dotted path in obj, as text (a
// number as written, so a 17-digit id keeps every digit); "" when the
// path leads nowhere or to null.
func lookup(obj map[string]any, path string) (string, error) {
	var cur any = obj
	for key := range strings.SplitSeq(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(c) {
				return "", nil
			}
			cur = c[i]
		default:
			return "", nil
		}
	}
	switch v := cur.(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	case json.Number:
		return v.String(), nil
	case bool:
		return "", errors.New("is true or false, not a string or a number")
	}
	return "", errors.New("is an object or an array, not a string or a number")
}

// StoredFields reads a connection's field mapping as it is stored (a JSON
// object of target to path; models.CRMConnection.Fields): an empty map for
// none, and false when the text is not such an object.
func StoredFields(s string) (map[string]string, bool) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, true
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return map[string]string{}, false
	}
	return out, true
}

// FieldsJSON is the stored form of a mapping: a JSON object, {} for none.
func FieldsJSON(fields map[string]string) string {
	if fields == nil {
		fields = map[string]string{}
	}
	b, _ := json.Marshal(fields) // strings only: cannot fail
	return string(b)
}
