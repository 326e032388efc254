// Package tomlx decodes scenario files strictly and explains what is wrong
// with them.
//
// [Decode] wraps github.com/BurntSushi/toml. Before anything is written into
// the destination it parses the file into a generic tree and checks that tree
// against the destination's Go type, so that one run reports every problem it
// can find, each naming the file, the line, the dotted key and what was
// expected and found:
//
//	scenario.toml:4: workload.arrival.rate: unknown key; did you mean "rate_per_s"?
//	scenario.toml:9: arms.1.router.choices: expected an integer, found string "two"
//	scenario.toml:12: horizon_s: must be a finite number, found inf
//
// # What is reported
//
//   - Syntax errors, with the parser's line, column and message plus a short
//     hint. The parser stops at the first syntax error, so at most one is
//     reported, and no other checks run on a file that does not parse. Its
//     key is the parser's last key (without array indices), which may be
//     empty; its column is the parser's and is left out when off the line.
//   - Unknown keys: keys with no struct field whose `toml` tag (or Go name,
//     when untagged) matches exactly. Matching is case-sensitive, unlike
//     BurntSushi's own fallback. Each comes with "did you mean X?" when a valid
//     key at that level is within edit distance 2 (at most a third of the
//     key's length for short keys; a swap of adjacent letters is one edit) or
//     differs only by a "_suffix" such as a unit ("rate" for "rate_per_s"),
//     else with the list of valid keys there. Keys under an unknown key are
//     not reported separately.
//   - Wrong types: a value that cannot be stored in its field, e.g. a string
//     for a number, a float for an integer, an integer out of the field's
//     range, a table for a scalar, a malformed duration string, or a value
//     rejected by the field's UnmarshalText. All of them are reported, not
//     only the first.
//   - NaN and infinite floats (TOML's nan, inf, -inf) anywhere in the file,
//     including under map and interface fields.
//
// Fields of interface type, map values of interface type, toml.Primitive and
// types implementing toml.Unmarshaler accept any TOML value (only the NaN/Inf
// check applies beneath them).
//
// # Key paths
//
// A key path is the dotted list of TOML keys from the top of the file, the
// same form config.Problem.Key uses. Elements of arrays, including arrays of
// tables written as [[arms]], are addressed by their zero-based index as a
// path segment: the second [[arms]] table's router name is
// "arms.1.router.name", and the third element of tokens = [..] is
// "workload.tokens.2". A key segment that is not a bare TOML key (letters,
// digits, '_' and '-') is written double-quoted, as Go's strconv.Quote writes
// it.
//
// # Positions
//
// A [Doc] maps every key path present in the file to its line (1-based): the
// line of its "key =" for a value, the line of its header for a [table] or one
// [[array]] element (a table created implicitly by a dotted header or key gets
// the line where it first appears; an explicit [table] header later wins),
// the first [[array]] header for the array as a whole, and the line where the
// element starts for an element of an inline array. Doc.Line falls back to the
// nearest present parent for absent keys, so validation problems about a
// missing key point at the table that should hold it. Doc.Has tells "absent,
// keep the default" from "set to the zero value".
//
// # Defaults and arrays
//
// The destination should hold its defaults before Decode; keys absent from
// the file leave their fields alone. Arrays replace a slice wholesale: the
// decoder reuses the old slice's backing array when it is large enough, so
// an element's defaults are those of whatever element used to sit at that
// index, if any, and the zero value otherwise. Apply per-element defaults
// after decoding, using Doc.Has.
//
// # Errors
//
// Every error returned by Decode and every non-nil result of Doc.Problems is
// an *[Error] listing all its [Item]s sorted by line, then key. When Decode
// returns an error the destination's contents are unspecified (it may be
// untouched or partly written) and must not be used.
package tomlx
