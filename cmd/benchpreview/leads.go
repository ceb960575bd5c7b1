package main

import (
	"context"
	"database/sql"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// loadLeads gives the account n leads captured over the last 6 days and 23
// hours, oldest first, as capture stores them: contacts with their match
// keys JSON and hashes, custom fields, a page URL with UTM parameters
// (four in five), fbc (two in three) and fbp (three in four) cookies, IP
// and user agent. One lead in 10 is junk (filled too fast), one in 50
// partial, one in 20 has no email, one in 9 no phone, one in 3 an
// external id. It then refreshes the planner's statistics and the
// visibility map, as autovacuum would have for an account in use.
func loadLeads(ctx context.Context, dbURL string, accountID int64, n int) error {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `
INSERT INTO leads (account_id, external_id, source, partial, email, phone, phone_e164, phone_country, first_name, last_name,
	city, state, zip, country, message, fbclid, fbc, fbp, client_ip_address, client_user_agent, event_source_url,
	fill_seconds, fields, match_keys, email_hash, phone_hash, junk, junk_reasons, created_at, received_at, updated_at)
SELECT $1, CASE WHEN i % 3 = 0 THEN 'crm-' || i END,
	(ARRAY['website', 'website', 'website', 'instant_form', 'crm'])[i % 5 + 1], i % 50 = 7,
	c.email, c.phone, c.e164, CASE WHEN c.e164 <> '' THEN c.region ELSE '' END, c.fn, c.ln, c.city, c.st, c.zip, 'US',
	(ARRAY['Need a quote for a new roof before winter, the old one leaks in two places.',
		'Looking for an appointment next week. My tooth hurts since Tuesday, mornings are best for me.',
		'We offer SEO services: guaranteed first page rankings on Google in 30 days, reply for our price list.',
		'Please call me back in the afternoon.', '',
		'Hi, we are interested in your services for a team of 25 people. Could you send pricing and availability? Thanks!'])[i % 6 + 1],
	CASE WHEN i % 3 <> 2 THEN 'IwAR' || c.id ELSE '' END, COALESCE(c.fbc, ''), COALESCE(c.fbp, ''), c.ip, c.ua, c.url,
	CASE WHEN i % 10 = 0 THEN 1.2 ELSE 8 + i % 200 END,
	CASE WHEN i % 8 = 0 THEN '{}' ELSE '{"budget":"' || (i * 37 % 20000) || '","service":"' ||
		(ARRAY['Roofing', 'Gutters', 'Siding'])[i % 3 + 1] || '","timeline":"' ||
		(ARRAY['ASAP', 'This month', 'Next quarter', 'Just browsing'])[i % 4 + 1] || '"}' END,
	'{' || concat_ws(',',
		CASE WHEN c.email <> '' THEN '"em":{"normalized":"' || c.email || '","hash":"' || c.eh || '"}' END,
		CASE WHEN c.e164 <> '' THEN '"ph":{"normalized":"' || c.e164 || '","hash":"' || c.ph || '"}' END,
		'"fn":{"normalized":"' || lower(c.fn) || '","hash":"' || encode(sha256(convert_to(lower(c.fn), 'UTF8')), 'hex') || '"}',
		'"ln":{"normalized":"' || lower(c.ln) || '","hash":"' || encode(sha256(convert_to(lower(c.ln), 'UTF8')), 'hex') || '"}',
		'"ct":{"normalized":"' || lower(replace(c.city, ' ', '')) || '","hash":"' ||
			encode(sha256(convert_to(lower(replace(c.city, ' ', '')), 'UTF8')), 'hex') || '"}',
		'"st":{"normalized":"' || lower(c.st) || '","hash":"' || encode(sha256(convert_to(lower(c.st), 'UTF8')), 'hex') || '"}',
		'"zp":{"normalized":"' || c.zip || '","hash":"' || encode(sha256(convert_to(c.zip, 'UTF8')), 'hex') || '"}',
		'"country":{"normalized":"us","hash":"79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621"}',
		CASE WHEN i % 3 = 0 THEN '"external_id":{"normalized":"crm-' || i || '","hash":"' ||
			encode(sha256(convert_to('crm-' || i, 'UTF8')), 'hex') || '"}' END,
		CASE WHEN c.ip <> '' THEN '"client_ip_address":"' || c.ip || '"' END,
		'"client_user_agent":"' || c.ua || '"',
		CASE WHEN c.fbc IS NOT NULL THEN '"fbc":"' || c.fbc || '"' END,
		CASE WHEN c.fbp IS NOT NULL THEN '"fbp":"' || c.fbp || '"' END,
		CASE WHEN c.e164 <> '' THEN '"phone_country":"' || c.region || '"' END) || '}',
	c.eh, c.ph, i % 10 = 0,
	CASE WHEN i % 10 = 0 THEN '[{"signal":"too_fast","message":"form filled in 1.2 s (under 2 s)"}]' ELSE '[]' END,
	c.t, c.t, c.t
FROM generate_series(1, $2) AS i,
LATERAL (SELECT
	(ARRAY['Jane', 'John', 'Maria', 'Wei', 'Aisha', 'Carlos', 'Olga', 'Liam'])[i % 8 + 1] AS fn,
	(ARRAY['Doe', 'Smith', 'Garcia', 'Chen', 'Khan', 'Silva', 'Ivanova', 'Murphy', 'Okafor'])[i % 9 + 1] AS ln,
	(ARRAY['gmail.com', 'yahoo.com', 'outlook.com', 'acme-roofing.com', 'brightdental.co', 'northwind.io',
		'mailinator.com', 'hotmail.com', 'contoso.com', 'fabrikam.net'])[i % 10 + 1] AS domain,
	(ARRAY['Austin', 'San Francisco', 'Toronto', 'Chicago', 'Miami', 'Seattle'])[i % 6 + 1] AS city,
	(ARRAY['TX', 'CA', 'ON', 'IL', 'FL', 'WA'])[i % 6 + 1] AS st,
	(ARRAY['78701', '94107', 'M5V 2T6', '60601', '33101', '98101'])[i % 6 + 1] AS zip,
	now() - interval '6 days 23 hours' * ($2 - i) / $2 AS t,
	md5(i::text) AS id) AS b,
LATERAL (SELECT
	CASE WHEN i % 20 = 5 THEN '' WHEN i % 23 = 0 THEN 'info' || i || '@' || b.domain
		ELSE lower(b.fn) || '.' || lower(b.ln) || i || '@' || b.domain END AS email,
	CASE WHEN i % 9 = 4 THEN '' WHEN i % 6 = 1 THEN '+44 20 7946 ' || lpad((i % 10000)::text, 4, '0')
		ELSE '(' || (201 + i % 700) || ') 555-' || lpad((i % 10000)::text, 4, '0') END AS phone,
	CASE WHEN i % 9 = 4 THEN '' WHEN i % 6 = 1 THEN '44207946' || lpad((i % 10000)::text, 4, '0')
		ELSE '1' || (201 + i % 700) || '555' || lpad((i % 10000)::text, 4, '0') END AS e164,
	CASE WHEN i % 6 = 1 THEN 'GB' WHEN i % 6 = 2 THEN 'CA' ELSE 'US' END AS region,
	b.fn, b.ln, b.city, b.st, b.zip, b.t, b.id,
	CASE WHEN i % 3 <> 2 THEN 'fb.1.' || (extract(epoch FROM b.t) * 1000)::bigint || '.IwAR' || b.id END AS fbc,
	CASE WHEN i % 4 <> 3 THEN 'fb.1.' || (extract(epoch FROM b.t) * 1000)::bigint || '.' || (1000000000 + i) END AS fbp,
	CASE WHEN i % 15 = 0 THEN '' ELSE '203.0.' || (i % 250) || '.' || (i % 200 + 1) END AS ip,
	(ARRAY['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
		'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
		'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
		'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15'])[i % 4 + 1] AS ua,
	'https://acme-roofing.com/' || (ARRAY['quote', 'contact', 'landing/spring-offer', 'pricing'])[i % 4 + 1] ||
		CASE WHEN i % 5 <> 0 THEN '?utm_source=' || (ARRAY['facebook', 'instagram', 'google', 'newsletter', 'fb'])[i % 5 + 1] ||
			'&utm_medium=paid_social&utm_campaign=spring_' || (i % 12) || '&utm_content=ad' || (i % 40) ELSE '' END AS url) AS c0,
LATERAL (SELECT c0.*,
	CASE WHEN c0.email <> '' THEN encode(sha256(convert_to(c0.email, 'UTF8')), 'hex') ELSE '' END AS eh,
	CASE WHEN c0.e164 <> '' THEN encode(sha256(convert_to(c0.e164, 'UTF8')), 'hex') ELSE '' END AS ph) AS c`,
		accountID, n); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "VACUUM ANALYZE leads")
	return err
}
