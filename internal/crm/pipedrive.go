package crm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// pipedriveBody is a Pipedrive webhook delivery, v2 (meta, data,
// previous) or v1 (meta, current, previous, event). Types are loose: ids
// are strings in v2's meta and numbers elsewhere.
type pipedriveBody struct {
	Meta struct {
		Version        scalar `json:"version"`
		Action         scalar `json:"action"`
		Entity         scalar `json:"entity"`
		Object         scalar `json:"object"`
		ID             scalar `json:"id"`
		Timestamp      scalar `json:"timestamp"`
		TimestampMicro scalar `json:"timestamp_micro"`
		WebhookID      scalar `json:"webhook_id"`
	} `json:"meta"`
	Data     json.RawMessage `json:"data"`
	Current  json.RawMessage `json:"current"`
	Previous json.RawMessage `json:"previous"`
	Event    scalar          `json:"event"`
}

// pipedriveDeal is what a delivery says of a deal.
type pipedriveDeal struct {
	ID       scalar `json:"id"`
	StageID  scalar `json:"stage_id"`
	PersonID scalar `json:"person_id"`
	Value    scalar `json:"value"`
	Currency scalar `json:"currency"`
}

func parsePipedrive(body []byte) ([]Change, int, error) {
	var b pipedriveBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, 0, fmt.Errorf("not a Pipedrive webhook: %w", err)
	}
	switch {
	case strings.HasPrefix(string(b.Meta.Version), "2") || isObject(b.Data) && !isObject(b.Current):
		return pipedriveV2(b, body)
	case isObject(b.Current) || isObject(b.Previous) || b.Event != "" || b.Meta.Object != "":
		return pipedriveV1(b, body)
	}
	return nil, 0, errors.New("not a Pipedrive webhook: no meta with data (v2) or current (v1)")
}

// pipedriveV2: a deal's change whose previous holds stage_id (previous
// holds only the fields that changed), or a deal created.
func pipedriveV2(b pipedriveBody, body []byte) ([]Change, int, error) {
	if b.Meta.Entity != "deal" {
		return nil, 1, nil
	}
	switch b.Meta.Action {
	case "create":
	case "change":
		var prev map[string]json.RawMessage
		if !isObject(b.Previous) || json.Unmarshal(b.Previous, &prev) != nil {
			return nil, 1, nil
		}
		if _, ok := prev["stage_id"]; !ok {
			return nil, 1, nil
		}
	default:
		return nil, 1, nil
	}
	var d pipedriveDeal
	if err := json.Unmarshal(b.Data, &d); err != nil {
		return nil, 0, fmt.Errorf("pipedrive data: %w", err)
	}
	at, err := parseTime(string(b.Meta.Timestamp))
	if err != nil {
		return nil, 0, fmt.Errorf("pipedrive meta.timestamp: %w", err)
	}
	key := "v2:" + string(b.Meta.ID)
	if b.Meta.ID == "" {
		// Pipedrive sends meta.id with every v2 event; without it only the
		// body tells a redelivery apart.
		key = "v2:body:" + bodyHash(body)
	}
	ch, err := pipedriveChange(d, key, at, body)
	if err != nil {
		return nil, 0, err
	}
	return []Change{ch}, 0, nil
}

// pipedriveV1: a deal updated whose stage_id differs from previous's, or
// added. v1 has no event id: the key is the webhook, the object and the
// time in microseconds.
func pipedriveV1(b pipedriveBody, body []byte) ([]Change, int, error) {
	action, object := string(b.Meta.Action), string(b.Meta.Object)
	if a, o, ok := strings.Cut(string(b.Event), "."); ok {
		if action == "" {
			action = a
		}
		if object == "" {
			object = o
		}
	}
	if object != "deal" || action != "updated" && action != "added" {
		return nil, 1, nil
	}
	var cur, prev pipedriveDeal
	if err := json.Unmarshal(orNull(b.Current), &cur); err != nil {
		return nil, 0, fmt.Errorf("pipedrive current: %w", err)
	}
	if err := json.Unmarshal(orNull(b.Previous), &prev); err != nil {
		return nil, 0, fmt.Errorf("pipedrive previous: %w", err)
	}
	if action == "updated" && cur.StageID == prev.StageID {
		return nil, 1, nil
	}
	if cur.ID == "" {
		cur.ID = b.Meta.ID
	}
	at, err := pipedriveV1Time(b.Meta.TimestampMicro, b.Meta.Timestamp)
	if err != nil {
		return nil, 0, err
	}
	key := "v1:" + string(b.Meta.WebhookID) + ":" + string(b.Meta.ID) + ":" + string(b.Meta.TimestampMicro)
	ch, err := pipedriveChange(cur, key, at, body)
	if err != nil {
		return nil, 0, err
	}
	return []Change{ch}, 0, nil
}

// pipedriveV1Time is meta.timestamp_micro when given, else meta.timestamp.
func pipedriveV1Time(micro, ts scalar) (time.Time, error) {
	if micro != "" {
		us, err := strconv.ParseInt(string(micro), 10, 64)
		if err != nil || us <= 0 {
			return time.Time{}, fmt.Errorf("pipedrive meta.timestamp_micro %q is not microseconds", micro)
		}
		return time.UnixMicro(us).UTC(), nil
	}
	at, err := parseTime(string(ts))
	if err != nil {
		return time.Time{}, fmt.Errorf("pipedrive meta.timestamp: %w", err)
	}
	return at, nil
}

func pipedriveChange(d pipedriveDeal, key string, at time.Time, body []byte) (Change, error) {
	if d.ID == "" || d.StageID == "" {
		return Change{}, errors.New("pipedrive deal without id or stage_id")
	}
	// A value that is not a number is left out rather than refusing
	// the stage change: the worker asks the API when it needs one.
	value, _ := parseValue(string(d.Value))
	return Change{
		Key:        key,
		Body:       bytes.Clone(bytes.TrimSpace(body)),
		ObjectID:   string(d.ID),
		StageID:    string(d.StageID),
		OccurredAt: at,
		PersonID:   string(d.PersonID),
		Value:      value,
		Currency:   string(d.Currency),
	}, nil
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// orNull is raw, or null when absent.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

func bodyHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
