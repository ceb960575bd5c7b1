package models

import "time"

// CRMConnection is a CRM that posts its deals' stage changes to the
// account's hook URL, /hooks/<Kind>/<Token> (docs/crm.md). Its secrets are
// sealed (internal/seal) or, from a setup file, named by the environment
// variable they were read from; they are never shown again.
type CRMConnection struct {
	ID        int64
	AccountID int64
	// Kind is hubspot, pipedrive or generic (crm.Kind).
	Kind string
	Name string
	// Token is the unguessable part of the hook URL. It names the
	// connection; the secret authenticates a delivery.
	Token string
	// SecretSealed is the HubSpot app's client secret, the Pipedrive Basic
	// Auth password, or the generic signing (or bearer) secret.
	SecretSealed string
	SecretEnv    string
	// APITokenSealed reads contacts and pipelines from the CRM's API.
	APITokenSealed string `gorm:"column:api_token_sealed"`
	APITokenEnv    string `gorm:"column:api_token_env"`
	// LeadIDProperty is the CRM contact property that holds Meta's lead
	// id, when the CRM keeps it.
	LeadIDProperty string
	// Fields is the generic mapping, a JSON object of target to dotted
	// path.
	Fields    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TableName names CRMConnection's table.
func (CRMConnection) TableName() string { return "crm_connections" }

// CRMStage is one row of a connection's stage table: a CRM stage id, its
// label, and the account's stage it means ("" while unmapped).
type CRMStage struct {
	ConnectionID int64 `gorm:"primaryKey;autoIncrement:false"`
	AccountID    int64
	CRMStageID   string `gorm:"column:crm_stage_id;primaryKey"`
	Label        string
	Pipeline     string
	Position     int
	Stage        string
	// SeenAt is when a delivery last carried the stage id.
	SeenAt *time.Time
}

// TableName names CRMStage's table.
func (CRMStage) TableName() string { return "crm_stages" }

// DeliveryStatus is where a CRM delivery is in the inbox.
type DeliveryStatus string

// Delivery statuses: waiting to be taken (new, or tried and waiting for
// what its WaitingFor names), done (handed to the recorder, or found
// recorded already), or given up (its lead never came).
const (
	DeliveryWaiting DeliveryStatus = "waiting"
	DeliveryDone    DeliveryStatus = "done"
	DeliveryGaveUp  DeliveryStatus = "gave_up"
)

// What a waiting delivery waits for. WaitingAttention: its body cannot
// become a stage change (no deal id, no stage, an event type leadsignal
// does not read); a person must look at the sender or the connection.
const (
	WaitingLead      = "lead"
	WaitingMapping   = "mapping"
	WaitingCRM       = "crm"
	WaitingAttention = "attention"
)

// CRMDelivery is one stage change a CRM delivered, stored as it came (the
// inbox), and what became of it.
type CRMDelivery struct {
	ID           int64
	AccountID    int64
	ConnectionID int64
	// Key is the CRM's idempotency key: a retry or duplicate of the same
	// change is stored once.
	Key        string
	Body       string
	ReceivedAt time.Time
	ObjectID   string
	CRMStageID string `gorm:"column:crm_stage_id"`
	// OccurredAt is the CRM's own time of the change (the time received
	// when it sent none).
	OccurredAt time.Time
	Status     DeliveryStatus
	WaitingFor string
	Reason     string
	Attempts   int
	NextTryAt  time.Time
	TriedAt    *time.Time
	// LeaseToken and LeaseUntil are the lease of the worker that claimed
	// it (store.ClaimCRMDeliveries).
	LeaseToken *int64
	LeaseUntil *time.Time
	LeadID     *int64
	// StageChangeID is the stage change it recorded; Stage is the
	// account's stage it mapped to.
	StageChangeID *int64
	Stage         string
}

// TableName names CRMDelivery's table.
func (CRMDelivery) TableName() string { return "crm_deliveries" }
