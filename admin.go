package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"interviewd/kv"
)

// Admin commands work on the data folder directly. bbolt allows one process per file,
// so against a folder a server holds they fail fast with one clear line.

const adminLockTimeout = 300 * time.Millisecond

func openAdmin(fs *flagSet, args []string) (*kv.DB, error) {
	if err := fs.parse(args); err != nil {
		return nil, err
	}
	data := fs.Lookup("data").Value.String()
	db, err := kv.Open(data, kv.Options{LockTimeout: adminLockTimeout})
	if kv.ErrorCode(err) == kv.ELOCKED {
		return nil, fmt.Errorf("data folder %s is held by a running interviewd server; stop it first (admin commands need the folder to themselves)", data)
	}
	return db, err
}

func printJSON(w io.Writer, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", raw)
	return err
}

func required(pairs ...string) error {
	var missing []string
	for i := 0; i < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			missing = append(missing, "--"+pairs[i])
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return nil
}

func parseID(flag, s string) (kv.ID, error) {
	id, ok := kv.ParseID(s)
	if !ok {
		return kv.ID{}, fmt.Errorf("--%s %q is not a UUID", flag, s)
	}
	return id, nil
}

func setupCommand(ctx context.Context, args []string, stdout io.Writer, env func(string) (string, bool)) error {
	fs := newFlagSet("setup", env)
	fs.str("data", "./data", "data folder")
	org := fs.String("org", "", "organisation name")
	email := fs.String("email", "", "owner's email")
	credits := fs.Int("credits", 0, "starting credits (one per live interview)")
	db, err := openAdmin(fs, args)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := required("org", *org, "email", *email); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	o, u, err := db.CreateOrg(ctx, kv.OrgInput{Name: *org, Email: *email, Credits: *credits})
	if err != nil {
		return err
	}
	return printJSON(stdout, map[string]any{"org_id": o.ID, "user_id": u.ID})
}

type keyOutput struct {
	KeyID       kv.ID      `json:"key_id"`
	Name        string     `json:"name"`
	Environment string     `json:"environment"`
	Scopes      []string   `json:"scopes"`
	ExpiresAt   *time.Time `json:"expires_at"`
	Secret      *string    `json:"secret,omitempty"`
	Hint        string     `json:"hint,omitempty"`
	CreatedAt   *time.Time `json:"created_at,omitempty"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
}

func keysCommand(ctx context.Context, args []string, stdout io.Writer, env func(string) (string, bool)) error {
	if len(args) == 0 {
		return fmt.Errorf("keys: want create, list or revoke")
	}
	sub, args := args[0], args[1:]
	fs := newFlagSet("keys "+sub, env)
	fs.str("data", "./data", "data folder")
	switch sub {
	case "create":
		org := fs.String("org", "", "organisation id")
		name := fs.String("name", "", "key name")
		envName := fs.String("env", "", "test or live")
		scopes := fs.String("scopes", "", "comma-separated scopes")
		days := fs.Int("expires-days", 0, "30, 90, 180 or 365 (default: no expiry)")
		db, err := openAdmin(fs, args)
		if err != nil {
			return err
		}
		defer db.Close()
		if err := required("org", *org, "name", *name, "env", *envName, "scopes", *scopes); err != nil {
			return fmt.Errorf("keys create: %w", err)
		}
		orgID, err := parseID("org", *org)
		if err != nil {
			return err
		}
		k, secret, err := db.CreateKey(ctx, kv.KeyInput{OrgID: orgID, Name: *name, Environment: kv.Environment(*envName),
			Scopes: strings.Split(*scopes, ","), ExpiresDays: *days})
		if err != nil {
			return err
		}
		return printJSON(stdout, keyOutput{KeyID: k.ID, Name: k.Name, Environment: string(k.Environment), Scopes: k.Scopes, ExpiresAt: k.ExpiresAt, Secret: &secret})
	case "list":
		org := fs.String("org", "", "organisation id")
		db, err := openAdmin(fs, args)
		if err != nil {
			return err
		}
		defer db.Close()
		if err := required("org", *org); err != nil {
			return fmt.Errorf("keys list: %w", err)
		}
		orgID, err := parseID("org", *org)
		if err != nil {
			return err
		}
		keys, err := db.FindKeys(ctx, orgID)
		if err != nil {
			return err
		}
		out := make([]keyOutput, 0, len(keys))
		for _, k := range keys {
			created := k.CreatedAt
			out = append(out, keyOutput{KeyID: k.ID, Name: k.Name, Environment: string(k.Environment), Scopes: k.Scopes,
				ExpiresAt: k.ExpiresAt, Hint: k.Hint, CreatedAt: &created, RevokedAt: k.RevokedAt})
		}
		return printJSON(stdout, out)
	case "revoke":
		key := fs.String("key", "", "key id")
		db, err := openAdmin(fs, args)
		if err != nil {
			return err
		}
		defer db.Close()
		if err := required("key", *key); err != nil {
			return fmt.Errorf("keys revoke: %w", err)
		}
		id, err := parseID("key", *key)
		if err != nil {
			return err
		}
		k, err := db.RevokeKey(ctx, id)
		if err != nil {
			return err
		}
		return printJSON(stdout, map[string]any{"key_id": k.ID, "revoked_at": k.RevokedAt})
	}
	return fmt.Errorf("keys: unknown subcommand %q (want create, list or revoke)", sub)
}

func creditsCommand(ctx context.Context, args []string, stdout io.Writer, env func(string) (string, bool)) error {
	if len(args) == 0 || args[0] != "add" {
		return fmt.Errorf("credits: want add")
	}
	fs := newFlagSet("credits add", env)
	fs.str("data", "./data", "data folder")
	org := fs.String("org", "", "organisation id")
	amount := fs.Int("amount", 0, "credits to add")
	db, err := openAdmin(fs, args[1:])
	if err != nil {
		return err
	}
	defer db.Close()
	if err := required("org", *org); err != nil {
		return fmt.Errorf("credits add: %w", err)
	}
	orgID, err := parseID("org", *org)
	if err != nil {
		return err
	}
	if *amount <= 0 {
		return fmt.Errorf("credits add: --amount must be a positive number")
	}
	balance, err := db.AddCredits(ctx, orgID, *amount)
	if err != nil {
		return err
	}
	return printJSON(stdout, map[string]any{"org_id": orgID, "credits": balance})
}
