// Package normalize turns a lead's raw contact data into Meta's match keys:
// each value normalised as Meta specifies and SHA-256 hashed, so that raw
// contact data never has to leave the server. It is pure: no I/O, no clock.
//
// Normalize does a whole lead; the exported normalisers (Email, Phone, Name,
// City, State, Zip, Country, Gender, DateOfBirth, ExternalID, FBC, FBP,
// ClientIP) do one value each and return ok=false for an empty or unusable
// value. A value that is given but unusable never becomes a key: Normalize
// lists it in Keys.Problems with its raw text, so a person can fix it. A phone
// number that cannot become E.164 also keeps its raw text in
// Keys.Phone.Normalized, with no Hash; a Key is sendable only with a Hash.
//
// Rules shared by every hashed key: a value that already is a SHA-256 (64 hex
// digits, any case) passes through lowercased and is not hashed again, and a
// value that normalises to "" is absent, never the hash of "".
//
// Where leadsignal differs from Meta's Business SDKs (the vectors in
// testdata/capi-vectors come from their tests; vectors_test.go lists every
// difference with its reason):
//   - ph gets the country calling code (the lead's country, else the
//     account's default) before hashing, as Meta's docs require; no SDK adds it.
//   - fn and ln drop punctuation and symbols as the docs and Meta's
//     capi-param-builder do ("firstname-2" -> "firstname2"); the Java SDK
//     only trims and lowercases.
//   - st maps US state names to their 2-letter codes (capi-param-builder,
//     Segment); the Java and Python SDKs do not.
//   - country accepts English names and refuses codes that are not ISO
//     3166-1 ("UU"), where the SDKs refuse names and accept any 2 letters.
//   - em is refused when it is not an address, never repaired by deleting
//     characters as the PHP SDK does.
//   - external_id is always hashed, after trimming, lowercasing and removing
//     whitespace as capi-param-builder does; the Python, PHP and Java SDKs
//     send it raw.
//   - client_ip_address must be a public address: a private, loopback or
//     link-local one is the caller's network, not the visitor's.
//   - fbc and fbp are kept exactly as the cookies were; a well-formed _fbc is
//     kept even when a different fbclid was captured with the lead
//     (capi-param-builder would rebuild it with the new fbclid).
package normalize
