// Package rule decides which send rules a lead matches: the one matcher
// behind capture, stage mappings, the rule preview and the lead page. It is
// pure: no I/O, no clock.
//
// A Spec is a rule as a person writes it: a mode, an event name, and
// conditions joined by "and" or "or". Its conditions may be groups, one
// level deep: the rule's combinator joins its plain conditions and its
// groups, each group joins its own conditions with its own combinator, so
// "(campaign A OR a valid phone) AND not junk" is one rule. A rule stores
// them as one JSON array (Spec.StoredConditions), groups as
// {"combinator", "conditions"} items after the plain conditions. Compile checks every part at once,
// returning each Problem with its path, and turns a valid Spec into a
// Matcher. A Matcher reads a Lead, a view of models.Lead that works out
// derived fields on first use and keeps them, so that many rules on one
// lead, or one rule over the preview's 200,000 leads, cost little more than
// the fields the conditions name.
//
// Fields (Schema.Fields lists them with a label and a kind):
//   - the lead's own: source, partial, junk, stage, external_id, email,
//     phone, phone_e164, first_name, last_name, city, state, zip, country,
//     gender, date_of_birth, message, fbclid, fbc, fbp, client_ip_address,
//     client_user_agent, event_source_url, fill_seconds, honeypot,
//     meta_lead_id;
//   - fields.<name>: the custom form field <name>, named exactly as the form
//     sent it;
//   - derived: email_domain, email_is_free, email_is_role,
//     email_is_disposable (the junk package's list), email_is_work (an
//     address that can receive mail, at neither a free nor a disposable
//     provider), phone_country (the region capture found for the phone),
//     phone_valid (libphonenumber's IsValidNumber: fictional numbers are
//     not valid), landing_path and utm_source, utm_medium, utm_campaign,
//     utm_content, utm_term (of event_source_url);
//   - junk_reason.<signal> for each junk signal: true when the signal fired
//     at capture, even if a person then marked the lead not junk (junk is
//     the verdict in force);
//   - the stage change's, for stage mappings only (a rule of another mode
//     naming one does not compile): change.value, the deal value the
//     change carried (a number, unknown without one), and change.currency
//     (its ISO 4217 code in upper case, "" without one). Lead.SetChange
//     gives the change; without it, as for a stage filled in before the
//     one that changed, both are unknown.
//
// Bool fields read "true" or "false"; fill_seconds reads as a number, ""
// when unknown; a derived true/false field of something the lead lacks
// (the email fields without an email, phone_valid without a phone) is
// unknown, "", which fails equals and not_equals and passes is_empty.
// phone_country reads the lead's column (its match keys until the backfill
// reaches a lead captured before migration 0016), and phone_valid parses
// the phone: about twenty microseconds a lead, where other fields cost
// well under one. A condition reads at most a field's first 4 KB
// (MaxFieldRead), and a junk lead matches only a rule whose conditions
// require junk (Matcher.RequiresJunk).
//
// Choices where the design is silent:
//   - Text compares caseless and canonical (NFC and Unicode full case
//     folding: "ÉCOLE" is "école", "Straße" is "STRASSE"), with values and
//     patterns trimmed of surrounding space. A regex is Go's RE2,
//     case-insensitive unless it says (?-i).
//   - An empty value is not equal to any pattern, contains none and is in no
//     list: not_equals, not_contains and not_in_list hold for it. It is no
//     number, so gt and lt fail.
//   - gt and lt read plain decimal numbers ("5000", "2.5", "1e3"): "$5,000"
//     is no number and fails both. They apply to fill_seconds,
//     change.value and custom fields; other text fields refuse them. Both
//     are strict: "a deal of at least 500" is change.value gt 499.99.
//   - is_empty and not_empty take no pattern; one given with them is a
//     problem rather than silently dropped, so a setup file round-trips.
//   - automatic_completed takes no conditions (it sends every completed
//     lead) and automatic_match needs at least one. A junk lead matches only
//     a rule whose conditions require junk; a partial lead matches
//     automatic_partial and manual rules and stage mappings, never the
//     other two automatic modes, and automatic_partial sends only partial
//     leads.
//   - A custom field that no lead has carried is a typo unless the Schema is
//     Open.
//   - A custom event name is 1 to 40 ASCII letters, digits, underscores,
//     hyphens and inner spaces, and not a standard name in another case
//     ("lead"): Meta publishes no rule for the Conversions API.
//   - MaxConditions, MaxPatternLen, MaxListLen, MaxListItems and
//     MaxRegexSize bound what one rule costs to compile and to evaluate.
package rule
