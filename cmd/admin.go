package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"interviewd/blobs"
	"interviewd/kv"
)

// Admin commands: each is a row of the command table (command.go) whose flags are
// checked before anything touches disk and whose work runs against a *kv.DB, opened
// here or held by the running server (admin_socket.go).

// runAdmin is the command line's side of an admin command.
func runAdmin(ctx context.Context, cmd *command, args []string, sio stdio) error {
	fs, run, err := parseAdmin(cmd, args, sio.env)
	if errors.Is(err, errHelp) {
		fs.printUsage(sio.stdout, cmd.synopsis, cmd.summary)
		return nil
	}
	if err != nil {
		return err
	}
	data := fs.Lookup("data").Value.String()
	spec := fs.Lookup("blobs").Value.String()
	blobStore := func() (blobs.Store, error) { return openBlobs(ctx, spec, data, sio.env) }
	if store := fs.Lookup("store").Value.String(); store != "" {
		// A shared database has no file lock to honour: every node and every admin
		// command opens it directly, in transactions of its own.
		bs, err := blobStore()
		if err != nil {
			return err
		}
		db, err := kv.Open(data, kv.Options{Store: store, Blobs: bs})
		if err != nil {
			return err
		}
		defer db.Close()
		return run(ctx, db, sio.stdout)
	}
	return dispatchAdmin(ctx, cmd, data, blobStore, args, fs.used, run, sio.stdout)
}

// parseAdmin parses and checks cmd's flags and returns its work: the client and the
// server both call it, so a command means the same on either side.
func parseAdmin(cmd *command, args []string, env func(string) (string, bool)) (*flagSet, adminRun, error) {
	fs := newFlagSet(cmd.name, env)
	fs.str("data", "DIR", "./data", "data folder")
	storeCheck := addStoreFlag(fs)
	// A running server uses its own blob store; this one is for a stopped server's data
	// (or, with --store, for every command).
	fs.str("blobs", "DIR|s3://BUCKET", "", blobsFlagHelp)
	check := cmd.define(fs)
	if err := fs.parse(args); err != nil {
		return fs, nil, err
	}
	if _, err := storeCheck(); err != nil {
		return fs, nil, err
	}
	run, err := check()
	if err != nil {
		return fs, nil, fmt.Errorf("%s: %w", cmd.name, inUserWords(err))
	}
	return fs, func(ctx context.Context, db *kv.DB, out io.Writer) error {
		if err := run(ctx, db, out); err != nil {
			return fmt.Errorf("%s: %w", cmd.name, inUserWords(err))
		}
		return nil
	}, nil
}

// inUserWords rewrites a kv validation error so it names flags, not record fields.
func inUserWords(err error) error {
	var ke *kv.Error
	if !errors.As(err, &ke) || len(ke.Fields) == 0 {
		return err
	}
	parts := make([]string, 0, len(ke.Fields))
	for _, f := range ke.Fields {
		parts = append(parts, flagOfField(f.Loc)+": "+f.Msg)
	}
	return errors.New(strings.Join(parts, "; "))
}

func flagOfField(loc []any) string {
	if len(loc) == 0 {
		return "arguments"
	}
	name, _ := loc[0].(string)
	switch name {
	case "environment":
		name = "env"
	case "patterns":
		if len(loc) > 1 {
			if i, ok := loc[1].(int); ok {
				return "--pattern #" + strconv.Itoa(i+1)
			}
		}
		name = "pattern"
	}
	return "--" + strings.ReplaceAll(name, "_", "-")
}

// printJSON prints v indented, leaving <, > and & as they are.
func printJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
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

// needID parses the required id flag name.
func needID(name, s string) (kv.ID, error) {
	if err := required(name, s); err != nil {
		return kv.ID{}, err
	}
	id, ok := kv.ParseID(strings.TrimSpace(s))
	if !ok {
		return kv.ID{}, fmt.Errorf("--%s %q is not a UUID", name, s)
	}
	return id, nil
}

// orgMissing says which organisation was not found, and where to look.
func orgMissing(err error, org kv.ID) error {
	if kv.ErrorCode(err) == kv.ENOTFOUND && strings.HasPrefix(err.Error(), "Organisation") {
		return fmt.Errorf("no organisation with id %s (interviewd orgs list shows them)", org)
	}
	return err
}

func setupRow() *command {
	return &command{name: "setup", synopsis: "--org NAME --email EMAIL [--name NAME] [--credits N] [--allow-duplicate]", creates: true,
		summary: "Create an organisation and its owner; prints {org_id, user_id, email, sign_in}.\n" +
			"The owner signs in to the web app with a code sent to EMAIL (with no INTERVIEWD_SMTP_URL,\n" +
			"the code is in the server's log and in `interviewd mail outbox`).\n" +
			"A second organisation of the same name is refused unless --allow-duplicate is given.",
		define: func(fs *flagSet) func() (adminRun, error) {
			org := fs.String("org", "", "organisation name")
			email := fs.String("email", "", "the owner's email: they sign in with codes sent to it")
			name := fs.String("name", "", "the owner's display name (optional)")
			credits := fs.Int("credits", 0, "starting credits (one per live interview)")
			dup := fs.Bool("allow-duplicate", false, "create it even when an organisation of that name exists")
			return func() (adminRun, error) {
				if err := required("org", *org, "email", *email); err != nil {
					return nil, err
				}
				in := kv.OrgInput{Name: *org, Email: *email, OwnerName: *name, Credits: *credits, AllowDuplicate: *dup}
				if err := in.Validate(); err != nil {
					return nil, err
				}
				return func(ctx context.Context, db *kv.DB, out io.Writer) error {
					o, u, err := db.CreateOrg(ctx, in)
					var ke *kv.Error
					if errors.As(err, &ke) && ke.Reason == "org_exists" {
						// A second run of the Quickstart lands here: point at the
						// organisation there is, and at how to list them all.
						return fmt.Errorf("%s: use that id (`interviewd orgs list` lists every organisation), or pass --allow-duplicate to create another anyway", ke.Message)
					}
					if err != nil {
						return err
					}
					return printJSON(out, map[string]any{"org_id": o.ID, "user_id": u.ID, "email": u.Email,
						"sign_in": "Open the server's /app and sign in with " + u.Email + ": the code goes to that address, or, with no INTERVIEWD_SMTP_URL, to the server log and `interviewd mail outbox`."})
				}, nil
			}
		}}
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

func keysCreateRow() *command {
	return &command{name: "keys create", synopsis: "--org ORG_ID --name NAME --env test|live --scopes SCOPE,... [--expires-days 30|90|180|365]",
		summary: "Create an API key; prints it with its secret, the only time the secret is shown.\nScopes: " + strings.Join(kv.AllScopes, ", ") + ".",
		define: func(fs *flagSet) func() (adminRun, error) {
			org := fs.String("org", "", "organisation id")
			name := fs.String("name", "", "the key's name")
			envName := fs.String("env", "", "data environment: test or live")
			scopes := fs.String("scopes", "", "comma-separated scopes")
			days := fs.Int("expires-days", 0, "30, 90, 180 or 365 (default: no expiry)")
			return func() (adminRun, error) {
				if err := required("org", *org, "name", *name, "env", *envName, "scopes", *scopes); err != nil {
					return nil, err
				}
				orgID, err := needID("org", *org)
				if err != nil {
					return nil, err
				}
				in := kv.KeyInput{OrgID: orgID, Name: *name, Environment: kv.Environment(*envName), ExpiresDays: *days, ByOperator: true}
				if !in.Environment.Valid() {
					return nil, fmt.Errorf("--env %q: want test or live", *envName)
				}
				if in.ExpiresDays != 0 && !slices.Contains(kv.KeyExpiryDays, in.ExpiresDays) {
					return nil, fmt.Errorf("--expires-days %d: want 30, 90, 180 or 365 (or leave it out for no expiry)", *days)
				}
				for _, s := range strings.Split(*scopes, ",") {
					s = strings.TrimSpace(s)
					if !slices.Contains(kv.AllScopes, s) {
						return nil, fmt.Errorf("unknown scope %q (known: %s)", s, strings.Join(kv.AllScopes, ", "))
					}
					in.Scopes = append(in.Scopes, s)
				}
				if n := len([]rune(strings.TrimSpace(*name))); n == 0 || n > 100 {
					return nil, fmt.Errorf("--name must be 1 to 100 characters")
				}
				return func(ctx context.Context, db *kv.DB, out io.Writer) error {
					k, secret, err := db.CreateKey(ctx, in)
					if err != nil {
						return orgMissing(err, orgID)
					}
					return printJSON(out, keyOutput{KeyID: k.ID, Name: k.Name, Environment: string(k.Environment), Scopes: k.Scopes, ExpiresAt: k.ExpiresAt, Secret: &secret})
				}, nil
			}
		}}
}

func keysListRow() *command {
	return &command{name: "keys list", synopsis: "--org ORG_ID", summary: "List an organisation's keys (never a secret).",
		define: func(fs *flagSet) func() (adminRun, error) {
			org := fs.String("org", "", "organisation id")
			return func() (adminRun, error) {
				orgID, err := needID("org", *org)
				if err != nil {
					return nil, err
				}
				return func(ctx context.Context, db *kv.DB, out io.Writer) error {
					if _, err := db.FindOrgByID(ctx, orgID); err != nil {
						return orgMissing(err, orgID)
					}
					keys, err := db.FindKeys(ctx, orgID)
					if err != nil {
						return err
					}
					list := make([]keyOutput, 0, len(keys))
					for _, k := range keys {
						created := k.CreatedAt
						list = append(list, keyOutput{KeyID: k.ID, Name: k.Name, Environment: string(k.Environment), Scopes: k.Scopes,
							ExpiresAt: k.ExpiresAt, Hint: k.Hint, CreatedAt: &created, RevokedAt: k.RevokedAt})
					}
					return printJSON(out, list)
				}, nil
			}
		}}
}

func keysRevokeRow() *command {
	return &command{name: "keys revoke", synopsis: "--key KEY_ID", summary: "Revoke a key; it stops working at once.",
		define: func(fs *flagSet) func() (adminRun, error) {
			key := fs.String("key", "", "key id")
			return func() (adminRun, error) {
				id, err := needID("key", *key)
				if err != nil {
					return nil, err
				}
				return func(ctx context.Context, db *kv.DB, out io.Writer) error {
					k, err := db.RevokeKey(ctx, id)
					if err != nil {
						return err
					}
					return printJSON(out, map[string]any{"key_id": k.ID, "revoked_at": k.RevokedAt})
				}, nil
			}
		}}
}

// creditsOutput is what credits add and credits show print: a struct, not a map, so the
// fields come in the documented order ({"org_id","credits"}) rather than sorted.
type creditsOutput struct {
	OrgID   kv.ID `json:"org_id"`
	Credits int   `json:"credits"`
}

func creditsAddRow() *command {
	return &command{name: "credits add", synopsis: "--org ORG_ID --amount N", summary: "Add credits (one per live interview); prints the new balance.",
		define: func(fs *flagSet) func() (adminRun, error) {
			org := fs.String("org", "", "organisation id")
			amount := fs.Int("amount", 0, "credits to add")
			return func() (adminRun, error) {
				orgID, err := needID("org", *org)
				if err != nil {
					return nil, err
				}
				if *amount <= 0 {
					return nil, fmt.Errorf("--amount must be a positive number")
				}
				return func(ctx context.Context, db *kv.DB, out io.Writer) error {
					balance, err := db.AddCredits(ctx, orgID, *amount)
					if err != nil {
						return orgMissing(err, orgID)
					}
					return printJSON(out, creditsOutput{OrgID: orgID, Credits: balance})
				}, nil
			}
		}}
}

func creditsShowRow() *command {
	return &command{name: "credits show", synopsis: "--org ORG_ID", summary: "Print an organisation's credits.",
		define: func(fs *flagSet) func() (adminRun, error) {
			org := fs.String("org", "", "organisation id")
			return func() (adminRun, error) {
				orgID, err := needID("org", *org)
				if err != nil {
					return nil, err
				}
				return func(ctx context.Context, db *kv.DB, out io.Writer) error {
					o, err := db.FindOrgByID(ctx, orgID)
					if err != nil {
						return orgMissing(err, orgID)
					}
					return printJSON(out, creditsOutput{OrgID: o.ID, Credits: o.Credits})
				}, nil
			}
		}}
}

func orgsListRow() *command {
	return &command{name: "orgs list", synopsis: "", summary: "List every organisation: id, name and credits.",
		define: func(fs *flagSet) func() (adminRun, error) {
			return func() (adminRun, error) {
				return func(ctx context.Context, db *kv.DB, out io.Writer) error {
					orgs, err := db.FindOrgs(ctx)
					if err != nil {
						return err
					}
					type row struct {
						OrgID   kv.ID  `json:"org_id"`
						Name    string `json:"name"`
						Credits int    `json:"credits"`
					}
					list := make([]row, len(orgs))
					for i, o := range orgs {
						list[i] = row{o.ID, o.Name, o.Credits}
					}
					return printJSON(out, list)
				}, nil
			}
		}}
}
