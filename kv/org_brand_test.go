package kv

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

// testLogo returns a w×h PNG.
func testLogo(tb testing.TB, w, h int) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// TestValidateBrand: names are one line, addresses real addresses, and colours
// #rrggbb dark enough to read on the pages' light backgrounds (WCAG AA).
func TestValidateBrand(t *testing.T) {
	b, err := ValidateBrand(Brand{DisplayName: " Acme Research ", AccentColor: "#1D4ED8", ContactEmail: " research@acme.example "})
	if err != nil || b.DisplayName != "Acme Research" || b.AccentColor != "#1d4ed8" || b.ContactEmail != "research@acme.example" {
		t.Fatalf("got %+v, %v", b, err)
	}
	for _, tc := range []struct {
		name, field string
		in          Brand
	}{
		{"ErrTwoLines", "display_name", Brand{DisplayName: "Acme\nResearch"}},
		{"ErrLongName", "display_name", Brand{DisplayName: strings.Repeat("a", MaxDisplayName+1)}},
		{"ErrNamedAddress", "contact_email", Brand{ContactEmail: "Acme <research@acme.example>"}},
		{"ErrNotAnAddress", "contact_email", Brand{ContactEmail: "research"}},
		{"ErrColourShape", "accent_color", Brand{AccentColor: "blue"}},
		{"ErrColourShort", "accent_color", Brand{AccentColor: "#abc"}},
		{"ErrColourTooLight", "accent_color", Brand{AccentColor: "#ffcc00"}},
		{"ErrColourJustTooLight", "accent_color", Brand{AccentColor: "#7a7a7a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ValidateBrand(tc.in)
			var ke *Error
			if !asError(err, &ke) || ke.Code != EINVALID || len(ke.Fields) != 1 || ke.Fields[0].Loc[0] != tc.field {
				t.Fatalf("got %v, want EINVALID at %s", err, tc.field)
			}
		})
	}
	// The contrast rule is WCAG's: black on white is 21:1, and #767676 the lightest grey
	// that passes 4.5:1 on white.
	black, _ := parseHexColor("#000000")
	white, _ := parseHexColor("#ffffff")
	grey, _ := parseHexColor("#767676")
	if r := contrastRatio(black, white); r < 20.99 || r > 21.01 {
		t.Fatalf("black on white %v", r)
	}
	if r := contrastRatio(grey, white); r < 4.5 || r > 4.6 {
		t.Fatalf("#767676 on white %v", r)
	}
}

// TestBrandAndLogo: the brand and the logo are saved on the organisation; saving the
// brand keeps the logo; a logo that is not a small PNG or JPEG is refused.
func TestBrandAndLogo(t *testing.T) {
	db := mustOpenDB(t, nil)
	ctx := context.Background()
	org := mustOrg(t, db, "brand")
	if _, err := db.FindLogo(ctx, org.ID); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("no logo yet: %v", err)
	}
	logo := testLogo(t, 120, 40)
	info, err := db.SetLogo(ctx, org.ID, logo)
	if err != nil || info.MediaType != "image/png" || info.Width != 120 || info.Height != 40 || info.Size != len(logo) || info.Version == "" {
		t.Fatalf("logo %+v %v", info, err)
	}
	if _, err := db.SetBrand(ctx, org.ID, Brand{DisplayName: "Acme Research", AccentColor: "#1d4ed8"}); err != nil {
		t.Fatal(err)
	}
	got, err := db.FindOrgByID(ctx, org.ID)
	if err != nil || got.ShownName() != "Acme Research" || got.Brand.AccentColor != "#1d4ed8" || got.Brand.Logo == nil || *got.Brand.Logo != info {
		t.Fatalf("org %+v %v", got.Brand, err)
	}
	stored, err := db.FindLogo(ctx, org.ID)
	if err != nil || !bytes.Equal(stored.Data, logo) || stored.LogoInfo != info {
		t.Fatalf("stored logo %+v %v", stored.LogoInfo, err)
	}
	for name, data := range map[string][]byte{
		"ErrSVG":     []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`),
		"ErrTooBig":  append(testLogo(t, 10, 10), make([]byte, MaxLogoBytes)...),
		"ErrTooWide": testLogo(t, MaxLogoDimension+1, 1),
		"ErrEmpty":   nil,
		"ErrGarbage": []byte("\x89PNG\r\n\x1a\nnot really"),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := db.SetLogo(ctx, org.ID, data); ErrorCode(err) != EINVALID {
				t.Fatalf("got %v, want EINVALID", err)
			}
		})
	}
	if err := db.RemoveLogo(ctx, org.ID); err != nil {
		t.Fatal(err)
	}
	got, _ = db.FindOrgByID(ctx, org.ID)
	if got.Brand == nil || got.Brand.Logo != nil || got.Brand.DisplayName != "Acme Research" {
		t.Fatalf("after removal %+v", got.Brand)
	}
	if _, err := db.FindLogo(ctx, org.ID); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("removed logo: %v", err)
	}
	if got.ShownName() == got.Name {
		t.Fatal("display name lost")
	}
	if _, err := db.SetBrand(ctx, org.ID, Brand{}); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.FindOrgByID(ctx, org.ID); got.Brand != nil || got.ShownName() != "brand" {
		t.Fatalf("cleared brand %+v", got.Brand)
	}
}
