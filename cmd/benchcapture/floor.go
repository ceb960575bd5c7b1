package main

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// The floor: what any capture over HTTP costs at least, to tell how much of
// the budget is left to leadsignal. A bare net/http handler checks the
// bearer key, decodes the lead's JSON and INSERTs it as one row, the row
// .ci/bench's pgbench script inserts (an email, a phone and the body as its
// payload), in one statement per request: no normalising, no hashing, no
// junk checks, no event, no idempotency.
const floorTableSQL = `CREATE TABLE floor_leads (
    id         bigserial PRIMARY KEY,
    account_id bigint NOT NULL,
    email      text NOT NULL,
    phone      text NOT NULL,
    payload    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
)`

// floorLead is what the bare handler reads of a lead.
type floorLead struct {
	Email string `json:"email"`
	Phone string `json:"phone"`
}

// newFloor returns the bare handler, storing into floor_leads of dbURL's
// schema, and a func that closes its pool.
func newFloor(ctx context.Context, dbURL string, accountID int64, secret string) (http.Handler, func(), error) {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	if _, err := db.ExecContext(ctx, floorTableSQL); err != nil {
		db.Close()
		return nil, nil, err
	}
	want := []byte("Bearer " + secret)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, `{"error":{"code":"unauthorized"}}`, http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
		if err != nil {
			http.Error(w, `{"error":{"code":"too_large"}}`, http.StatusRequestEntityTooLarge)
			return
		}
		var l floorLead
		if err := json.Unmarshal(body, &l); err != nil {
			http.Error(w, `{"error":{"code":"invalid_json"}}`, http.StatusBadRequest)
			return
		}
		var id int64
		if err := db.QueryRowContext(r.Context(), "INSERT INTO floor_leads (account_id, email, phone, payload) VALUES ($1, $2, $3, $4) RETURNING id",
			accountID, l.Email, l.Phone, string(body)).Scan(&id); err != nil {
			http.Error(w, `{"error":{"code":"internal"}}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"lead_id":"` + strconv.FormatInt(id, 10) + `","junk":false,"junk_reasons":[],"events":[]}`))
	})
	return h, func() { db.Close() }, nil
}
