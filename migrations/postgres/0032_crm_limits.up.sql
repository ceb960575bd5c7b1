-- Limits of the CRM inbox (docs/crm.md, "Limits").
--
-- The lookup keys of each delivery that waits for its lead, as the leads
-- table holds them (email and phone: the match key's hash; id,
-- external_id, meta_lead_id: the value), written when the worker tried it
-- and found no lead. A new lead wakes the deliveries whose keys it has,
-- found through this index, never by trying every waiting delivery again.
CREATE TABLE crm_delivery_keys (
    delivery_id bigint NOT NULL REFERENCES crm_deliveries (id) ON DELETE CASCADE,
    account_id  bigint NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('id', 'external_id', 'meta_lead_id', 'email', 'phone')),
    value       text NOT NULL,
    PRIMARY KEY (delivery_id, kind, value)
);
CREATE INDEX crm_delivery_keys_lead_idx ON crm_delivery_keys (account_id, kind, value);

-- A connection holds at most 50,000 waiting deliveries: the hook counts
-- them up to that bound on this index, never over the whole inbox.
CREATE INDEX crm_deliveries_connection_waiting_idx ON crm_deliveries (connection_id) WHERE status = 'waiting';
