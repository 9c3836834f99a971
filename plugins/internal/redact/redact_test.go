package redact

import (
	"strings"
	"testing"
)

// mustRedactor returns a Redactor for cfg and fails the test if New refuses it.
func mustRedactor(tb testing.TB, cfg Config) *Redactor {
	tb.Helper()
	r, err := New(cfg)
	if err != nil {
		tb.Fatalf("New(%+v): %v", cfg, err)
	}
	return r
}

// checkText runs each case through r.Text and compares with want.
func checkText(t *testing.T, r *Redactor, cases []struct{ name, in, want string }) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(r.Text(nil, []byte(tc.in))); got != tc.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestTextEmail(t *testing.T) {
	r := mustRedactor(t, Config{Email: true})
	checkText(t, r, []struct{ name, in, want string }{
		{"Plain", "write to jane.doe@example.com today", "write to [EMAIL] today"},
		{"SentenceEnd", "Mail me: jane@example.co.uk.", "Mail me: [EMAIL]."},
		{"PlusTag", "j+tag@sub.example.org", "[EMAIL]"},
		{"Upper", "JANE@EXAMPLE.COM", "[EMAIL]"},
		{"Quoted", "'jane@example.com'", "'[EMAIL]'"},
		{"Angle", "Jane <jane_d@example.io>", "Jane <[EMAIL]>"},
		{"Apostrophe", "o'brien@example.ie", "[EMAIL]"},
		{"UnicodeLocal", "écrire à zoë.müller@example.de", "écrire à [EMAIL]"},
		{"CurlyQuotes", "“jane@example.com”", "“[EMAIL]”"},
		{"Punycode", "a@example.xn--p1ai", "[EMAIL]"},
		{"Two", "a@b.io, c@d.io", "[EMAIL], [EMAIL]"},
		{"KeptNoDot", "user@localhost", "user@localhost"},
		{"KeptNumericTLD", "x@1.2", "x@1.2"},
		{"KeptHandle", "ping @jane on chat", "ping @jane on chat"},
		{"KeptEmptyLocal", "@example.com", "@example.com"},
		{"KeptDotBeforeAt", "jane.@example.com", "jane.@example.com"},
	})
}

func TestTextCard(t *testing.T) {
	r := mustRedactor(t, Config{Card: true})
	checkText(t, r, []struct{ name, in, want string }{
		{"Visa", "card 4111111111111111 ok", "card [CARD] ok"},
		{"Spaces", "4111 1111 1111 1111", "[CARD]"},
		{"Dashes", "5500-0000-0000-0004.", "[CARD]."},
		{"Amex", "3782 822463 10005", "[CARD]"},
		{"Thirteen", "4222222222222", "[CARD]"},
		{"Nineteen", "6011 0000 0000 0000 001", "[CARD]"},
		{"AfterDigits", "ref 12 4111 1111 1111 1111", "ref 12 [CARD]"},
		{"KeptLuhnInvalid", "4111 1111 1111 1112", "4111 1111 1111 1112"},
		{"KeptTooShort", "411111111111", "411111111111"},
		{"KeptInsideLongNumber", "00004111111111111111", "00004111111111111111"},
		{"KeptDoubleSpace", "4111  1111 1111 1111", "4111  1111 1111 1111"},
	})
}

func TestTextIP(t *testing.T) {
	r := mustRedactor(t, Config{IP: true})
	checkText(t, r, []struct{ name, in, want string }{
		{"IPv4", "from 192.168.1.20 today", "from [IP] today"},
		{"IPv4Port", "10.0.0.1:8080", "[IP]:8080"},
		{"IPv4SentenceEnd", "It was 8.8.8.8.", "It was [IP]."},
		{"IPv4AfterLabel", "IP:172.16.0.1", "IP:[IP]"},
		{"KeptOctetOver255", "256.1.1.1", "256.1.1.1"},
		{"KeptVersion", "v1.2.3.4", "v1.2.3.4"},
		{"KeptLongDotted", "1.2.3.4.5", "1.2.3.4.5"},
		{"KeptThreeParts", "1.2.3", "1.2.3"},
		{"IPv6Full", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", "[IP]"},
		{"IPv6Compressed", "host 2001:db8::1 is up", "host [IP] is up"},
		{"IPv6Loopback", "::1", "[IP]"},
		{"IPv6Trailing", "prefix 2001:db8:: here", "prefix [IP] here"},
		{"IPv6Mapped", "::ffff:192.0.2.1", "[IP]"},
		{"IPv6Bracketed", "[fe80::1]:443", "[[IP]]:443"},
		{"IPv6AfterLabel", "IPv6:fe80::a:b", "IPv6:[IP]"},
		{"IPv6AfterWordColon", "IP::1", "IP[IP]"},
		{"IPv6SentenceEnd", "use fe80::1.", "use [IP]."},
		{"IPv6Zone", "fe80::1%eth0", "[IP]%eth0"},
		{"KeptTime", "at 12:30:45 sharp", "at 12:30:45 sharp"},
		{"KeptBareColons", "a :: b", "a :: b"},
		{"KeptMAC", "00:1a:2b:3c:4d:5e", "00:1a:2b:3c:4d:5e"},
		{"KeptTwoCompressions", "1::2::3", "1::2::3"},
		{"KeptLongGroup", "12345::1", "12345::1"},
		{"KeptNineGroups", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8:9"},
		{"KeptSpeaker", "Interviewer: hello", "Interviewer: hello"},
	})
}

func TestTextPhone(t *testing.T) {
	r := mustRedactor(t, Config{Phone: true})
	checkText(t, r, []struct{ name, in, want string }{
		{"USDashes", "call 555-123-4567 now", "call [PHONE] now"},
		{"USParens", "(555) 123-4567", "[PHONE]"},
		{"USParensNoSpace", "(555)123-4567", "[PHONE]"},
		{"USDots", "555.123.4567", "[PHONE]"},
		{"USBare", "5551234567", "[PHONE]"},
		{"USInternational", "+1 555 123 4567", "[PHONE]"},
		{"USInternationalParens", "+1 (555) 123-4567.", "[PHONE]."},
		{"UK", "+44 20 7946 0958", "[PHONE]"},
		{"UKTrunkZero", "+44 (0)20 7946 0958", "[PHONE]"},
		{"UKNational", "020 7946 0958", "[PHONE]"},
		{"UKMobile", "07700 900123", "[PHONE]"},
		{"France", "+33 1 23 45 67 89", "[PHONE]"},
		{"FranceDots", "01.23.45.67.89", "[PHONE]"},
		{"Germany", "+49 30 123456", "[PHONE]"},
		{"Local", "ring 555-1234", "ring [PHONE]"},
		{"Two", "555-123-4567 or 555-987-6543", "[PHONE] or [PHONE]"},
		{"KeptDate", "on 2024-01-15", "on 2024-01-15"},
		{"KeptDateDots", "on 2024.01.15", "on 2024.01.15"},
		{"KeptEuropeanDate", "on 15.01.2024", "on 15.01.2024"},
		{"KeptDecimal", "pi is 3.14159265358", "pi is 3.14159265358"},
		{"KeptYear", "in 1999 and 2001", "in 1999 and 2001"},
		{"KeptAmount", "paid 1,250,000", "paid 1,250,000"},
		{"KeptShort", "room 12-34", "room 12-34"},
		{"KeptInWord", "order AB5551234567", "order AB5551234567"},
		{"KeptSixteenDigits", "1234567890123456", "1234567890123456"},
	})
}

func TestTextCustomPatterns(t *testing.T) {
	r := mustRedactor(t, Config{Patterns: []Pattern{
		{Name: "employee_id", Regex: `E\d{6}`},
		{Name: "Postcode", Regex: `(?i)\b[a-z]{1,2}\d[a-z\d]? ?\d[a-z]{2}\b`},
		{Name: "EMPTY", Regex: `x*`},
	}})
	checkText(t, r, []struct{ name, in, want string }{
		{"Employee", "badge E123456 issued", "badge [EMPLOYEE_ID] issued"},
		{"Postcode", "lives in SW1A 1AA now", "lives in [POSTCODE] now"},
		{"EmptyMatchesSkipped", "abc", "abc"},
		{"NonEmptyOfEmptyable", "axxb", "a[EMPTY]b"},
	})
}

func TestTextAllClasses(t *testing.T) {
	r := mustRedactor(t, DefaultConfig())
	checkText(t, r, []struct{ name, in, want string }{
		{"Mixed",
			"Jane (jane@example.com, +1 555 123 4567) paid with 4111-1111-1111-1111 from 10.1.2.3 on 2024-01-15.",
			"Jane ([EMAIL], [PHONE]) paid with [CARD] from [IP] on 2024-01-15."},
		{"EmailWithDigits", "j.doe1975@mail.example.com", "[EMAIL]"},
		{"EmailIPLiteral", "root@[192.168.0.1]", "root@[[IP]]"},
		{"Unicode", "Zoë — zoë@example.com — ☎ 020 7946 0958", "Zoë — [EMAIL] — ☎ [PHONE]"},
		{"Nothing", "We talked about the onboarding flow.", "We talked about the onboarding flow."},
		{"Empty", "", ""},
	})
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"ErrBadRegex", Config{Patterns: []Pattern{{Name: "X", Regex: `(`}}}, "pattern X: error parsing regexp"},
		{"ErrEmptyRegex", Config{Patterns: []Pattern{{Name: "X", Regex: ""}}}, "regex is empty"},
		{"ErrLongRegex", Config{Patterns: []Pattern{{Name: "X", Regex: strings.Repeat("a", MaxPatternBytes+1)}}}, "longer than"},
		{"ErrNameStartsWithDigit", Config{Patterns: []Pattern{{Name: "1X", Regex: "a"}}}, "pattern name"},
		{"ErrNameWithSpace", Config{Patterns: []Pattern{{Name: "A B", Regex: "a"}}}, "pattern name"},
		{"ErrNameTooLong", Config{Patterns: []Pattern{{Name: strings.Repeat("A", 33), Regex: "a"}}}, "pattern name"},
		{"ErrTooMany", Config{Patterns: make([]Pattern, MaxPatterns+1)}, "custom patterns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    Config
		wantErr string
	}{
		{"OKNullIsDefault", `null`, DefaultConfig(), ""},
		{"OKEmptyIsDefault", `{}`, DefaultConfig(), ""},
		{"OKOneOff", `{"phone":false}`, Config{Email: true, Card: true, IP: true}, ""},
		{"OKPatterns", `{"email":false,"card":false,"ip":false,"phone":false,"patterns":[{"name":"A","regex":"a"}]}`,
			Config{Patterns: []Pattern{{Name: "A", Regex: "a"}}}, ""},
		{"OKPatternsNull", `{"patterns":null}`, DefaultConfig(), ""},
		{"OKSpaces", " { \"ip\" : false } ", Config{Email: true, Phone: true, Card: true}, ""},
		{"ErrUnknownField", `{"emails":false}`, Config{}, `config: unknown field "emails"`},
		{"ErrWrongType", `{"email":"no"}`, Config{}, `config: "email" must be true or false`},
		{"ErrPatternsNotArray", `{"patterns":{}}`, Config{}, `"patterns" must be an array`},
		{"ErrPatternNotObject", `{"patterns":["a"]}`, Config{}, "each pattern must be an object"},
		{"ErrPatternUnknownField", `{"patterns":[{"name":"A","re":"a"}]}`, Config{}, `unknown pattern field "re"`},
		{"ErrPatternNameNotString", `{"patterns":[{"name":1}]}`, Config{}, `pattern "name" must be a string`},
		{"ErrTrailing", `{} {}`, Config{}, "want end of line"},
		{"ErrNotObject", `[]`, Config{}, "config"},
		{"ErrNotJSON", `{`, Config{}, "config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(tc.raw))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseConfig = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Email != tc.want.Email || got.Phone != tc.want.Phone || got.Card != tc.want.Card ||
				got.IP != tc.want.IP || len(got.Patterns) != len(tc.want.Patterns) {
				t.Fatalf("ParseConfig = %+v, want %+v", got, tc.want)
			}
		})
	}
}
