package capi

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// MarshalJSON writes the event exactly as encoding/json would from its
// field tags (map keys sorted, <, > and & escaped), without reflection: the
// dispatcher encodes a thousand events per batch. Values of a kind it does
// not write itself go through encoding/json.
func (e ServerEvent) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 1024)
	b = append(b, `{"event_name":`...)
	b = appendString(b, e.EventName)
	b = append(b, `,"event_time":`...)
	b = strconv.AppendInt(b, e.EventTime, 10)
	b = append(b, `,"event_id":`...)
	b = appendString(b, e.EventID)
	b = append(b, `,"action_source":`...)
	b = appendString(b, e.ActionSource)
	if e.EventSourceURL != "" {
		b = append(b, `,"event_source_url":`...)
		b = appendString(b, e.EventSourceURL)
	}
	b = append(b, `,"user_data":`...)
	b, err := appendMap(b, e.UserData)
	if err != nil {
		return nil, err
	}
	if len(e.CustomData) > 0 {
		b = append(b, `,"custom_data":`...)
		if b, err = appendMap(b, e.CustomData); err != nil {
			return nil, err
		}
	}
	if e.MessagingChannel != "" {
		b = append(b, `,"messaging_channel":`...)
		b = appendString(b, e.MessagingChannel)
	}
	if e.DataProcessingOptions != nil {
		b = append(b, `,"data_processing_options":`...)
		b = appendStrings(b, e.DataProcessingOptions)
	}
	if e.DataProcessingOptionsCountry != nil {
		b = append(b, `,"data_processing_options_country":`...)
		b = strconv.AppendInt(b, int64(*e.DataProcessingOptionsCountry), 10)
	}
	if e.DataProcessingOptionsState != nil {
		b = append(b, `,"data_processing_options_state":`...)
		b = strconv.AppendInt(b, int64(*e.DataProcessingOptionsState), 10)
	}
	return append(b, '}'), nil
}

// appendMap writes a map as encoding/json does: null when nil, keys sorted.
func appendMap(b []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, m[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return appendString(b, v), nil
	case []string:
		if v != nil {
			return appendStrings(b, v), nil
		}
	}
	j, err := json.Marshal(v)
	return append(b, j...), err
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendString writes s quoted; a string that encoding/json would escape
// (quotes, backslashes, control characters, <, >, &, non-ASCII) goes
// through it.
func appendString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			j, _ := json.Marshal(s)
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
