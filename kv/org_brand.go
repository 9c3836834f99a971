package kv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"image"
	_ "image/jpeg" // logos may be JPEG
	_ "image/png"  // or PNG
	"math"
	"net/mail"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Brand is how an organisation presents itself on its participant pages: who is
// asking (a name, a logo), a colour, and whom to contact. The zero value shows the
// organisation's name and nothing else.
type Brand struct {
	// DisplayName replaces the organisation's name on participant pages.
	DisplayName string `json:"display_name,omitempty"`
	// AccentColor is "#rrggbb", checked to keep readable contrast (ValidateBrand).
	AccentColor string `json:"accent_color,omitempty"`
	// ContactEmail is shown as whom to ask about the research.
	ContactEmail string `json:"contact_email,omitempty"`
	// Logo describes the uploaded logo (its bytes are kept apart, see FindOrgLogo);
	// nil: none.
	Logo *LogoInfo `json:"logo,omitempty"`
}

// LogoInfo describes an organisation's logo.
type LogoInfo struct {
	MediaType string `json:"media_type"`
	Size      int    `json:"size"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	// Version is a short hash of the bytes: page URLs carry it, so a browser may keep
	// the image for good and still fetch a new one.
	Version string `json:"version"`
}

// Logo is a logo's bytes.
type Logo struct {
	LogoInfo
	Data      []byte    `json:"data"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Limits of an organisation's brand.
const (
	MaxDisplayName   = 100
	MaxContactEmail  = 254
	MaxLogoBytes     = 256 << 10
	MaxLogoDimension = 2048
	// MinAccentContrast is the contrast an accent colour needs against the pages'
	// light backgrounds, and white text needs on it (WCAG AA for normal text).
	MinAccentContrast = 4.5
)

// accentBackgrounds are the light-scheme colours an accent sits on or under in the
// participant pages (interview.css: --surface, --bg, --accent-soft); white text sits
// on it. The dark scheme keeps its own colours.
var accentBackgrounds = []string{"#ffffff", "#f4f5fb", "#eceeff"}

// BrandOrZero returns the organisation's brand (the zero value when it has none).
func (o Org) BrandOrZero() Brand {
	if o.Brand == nil {
		return Brand{}
	}
	return *o.Brand
}

// ShownName is the name participant pages show: the brand's display name, else the
// organisation's.
func (o Org) ShownName() string {
	if o.Brand != nil && o.Brand.DisplayName != "" {
		return o.Brand.DisplayName
	}
	return o.Name
}

// ValidateBrand trims and checks a brand's texts and colour (the logo is checked on
// upload): EINVALID with one FieldError per broken rule. The colour is normalised to
// lower case.
func ValidateBrand(b Brand) (Brand, error) {
	var errs []FieldError
	b.DisplayName = strings.TrimSpace(b.DisplayName)
	b.ContactEmail = strings.TrimSpace(b.ContactEmail)
	b.AccentColor = strings.ToLower(strings.TrimSpace(b.AccentColor))
	switch n := utf8.RuneCountInString(b.DisplayName); {
	case !utf8.ValidString(b.DisplayName) || strings.ContainsAny(b.DisplayName, "\x00\r\n"):
		errs = append(errs, FieldError{Loc: []any{"display_name"}, Type: "string_pattern_mismatch", Msg: "The name must be one line of text."})
	case n > MaxDisplayName:
		errs = append(errs, FieldError{Loc: []any{"display_name"}, Type: "string_too_long", Ctx: map[string]any{"max_length": MaxDisplayName},
			Msg: "String should have at most " + itoa(MaxDisplayName) + " characters."})
	}
	if b.ContactEmail != "" {
		a, err := mail.ParseAddress(b.ContactEmail)
		switch {
		case len(b.ContactEmail) > MaxContactEmail:
			errs = append(errs, FieldError{Loc: []any{"contact_email"}, Type: "string_too_long", Ctx: map[string]any{"max_length": MaxContactEmail},
				Msg: "String should have at most " + itoa(MaxContactEmail) + " characters."})
		case err != nil || a.Address != b.ContactEmail || !strings.Contains(a.Address[strings.LastIndexByte(a.Address, '@')+1:], "."):
			errs = append(errs, FieldError{Loc: []any{"contact_email"}, Type: "value_error", Msg: "Enter an email address such as research@example.org."})
		}
	}
	if b.AccentColor != "" {
		rgb, ok := parseHexColor(b.AccentColor)
		if !ok {
			errs = append(errs, FieldError{Loc: []any{"accent_color"}, Type: "string_pattern_mismatch", Msg: "Enter a colour as #rrggbb, for example #1d4ed8."})
		} else {
			for _, bg := range accentBackgrounds {
				back, _ := parseHexColor(bg)
				if r := contrastRatio(rgb, back); r < MinAccentContrast {
					errs = append(errs, FieldError{Loc: []any{"accent_color"}, Type: "value_error",
						Ctx: map[string]any{"min_contrast": MinAccentContrast},
						Msg: "This colour is too light to read on the pages (contrast " + strconv.FormatFloat(math.Floor(r*100)/100, 'f', 2, 64) +
							":1 against " + bg + ", at least 4.5:1 needed); choose a darker one."})
					break
				}
			}
		}
	}
	if errs != nil {
		return Brand{}, Invalid(errs...)
	}
	return b, nil
}

// parseHexColor reads "#rrggbb".
func parseHexColor(s string) ([3]float64, bool) {
	if len(s) != 7 || s[0] != '#' {
		return [3]float64{}, false
	}
	var rgb [3]float64
	for i := range 3 {
		v, err := strconv.ParseUint(s[1+2*i:3+2*i], 16, 8)
		if err != nil {
			return [3]float64{}, false
		}
		rgb[i] = float64(v) / 255
	}
	return rgb, true
}

// contrastRatio is WCAG 2's contrast ratio of two sRGB colours.
func contrastRatio(a, b [3]float64) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func luminance(c [3]float64) float64 {
	var l [3]float64
	for i, v := range c {
		if v <= 0.04045 {
			l[i] = v / 12.92
		} else {
			l[i] = math.Pow((v+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
}

// SetBrand replaces the organisation's name, colour and contact (its logo is kept).
// EINVALID (ValidateBrand); ENOTFOUND for an unknown organisation.
func (db *DB) SetBrand(ctx context.Context, org ID, b Brand) (Brand, error) {
	b, err := ValidateBrand(b)
	if err != nil {
		return Brand{}, err
	}
	err = db.update(ctx, func(tx Tx) error {
		o, err := orgByID(tx, org)
		if err != nil {
			return err
		}
		b.Logo = o.BrandOrZero().Logo
		o.Brand = brandOrNil(b)
		return db.putOrg(tx, o)
	})
	return b, err
}

func brandOrNil(b Brand) *Brand {
	if b == (Brand{}) {
		return nil
	}
	return &b
}

// CheckLogo returns what data is as a logo: a PNG or JPEG image up to MaxLogoBytes and
// MaxLogoDimension pixels a side. Anything else (SVG, which can carry script, among
// them) is EINVALID at ["logo"].
func CheckLogo(data []byte) (LogoInfo, error) {
	bad := func(msg string, ctx map[string]any) error {
		return Invalid(FieldError{Loc: []any{"logo"}, Type: "value_error", Msg: msg, Ctx: ctx})
	}
	if len(data) == 0 {
		return LogoInfo{}, bad("Choose an image file.", nil)
	}
	if len(data) > MaxLogoBytes {
		return LogoInfo{}, bad("The logo must be at most 256 KB.", map[string]any{"max_bytes": MaxLogoBytes})
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || (format != "png" && format != "jpeg") {
		return LogoInfo{}, bad("The logo must be a PNG or JPEG image.", nil)
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxLogoDimension || cfg.Height > MaxLogoDimension {
		return LogoInfo{}, bad("The logo must be at most 2048 pixels wide and high.", map[string]any{"max_pixels": MaxLogoDimension})
	}
	sum := sha256.Sum256(data)
	return LogoInfo{MediaType: "image/" + format, Size: len(data), Width: cfg.Width, Height: cfg.Height,
		Version: base64.RawURLEncoding.EncodeToString(sum[:9])}, nil
}

// SetLogo stores data as the organisation's logo (CheckLogo: EINVALID) with its
// description on the brand, in one transaction. ENOTFOUND for an unknown organisation.
func (db *DB) SetLogo(ctx context.Context, org ID, data []byte) (LogoInfo, error) {
	info, err := CheckLogo(data)
	if err != nil {
		return LogoInfo{}, err
	}
	err = db.update(ctx, func(tx Tx) error {
		o, err := orgByID(tx, org)
		if err != nil {
			return err
		}
		b := o.BrandOrZero()
		b.Logo = &info
		o.Brand = &b
		if err := putJSON(tx.Bucket(bucketOrgLogos), org[:], Logo{LogoInfo: info, Data: data, UpdatedAt: db.Now()}); err != nil {
			return err
		}
		return db.putOrg(tx, o)
	})
	return info, err
}

// RemoveLogo removes the organisation's logo. ENOTFOUND for an unknown organisation.
func (db *DB) RemoveLogo(ctx context.Context, org ID) error {
	return db.update(ctx, func(tx Tx) error {
		o, err := orgByID(tx, org)
		if err != nil {
			return err
		}
		b := o.BrandOrZero()
		b.Logo = nil
		o.Brand = brandOrNil(b)
		if err := tx.Bucket(bucketOrgLogos).Delete(org[:]); err != nil {
			return err
		}
		return db.putOrg(tx, o)
	})
}

// FindLogo returns the organisation's logo. ENOTFOUND when it has none.
func (db *DB) FindLogo(ctx context.Context, org ID) (Logo, error) {
	var l Logo
	err := db.view(ctx, func(tx Tx) error {
		ok, err := getJSON(tx.Bucket(bucketOrgLogos), org[:], &l)
		if err == nil && !ok {
			err = notFound("Logo")
		}
		return err
	})
	return l, err
}
