package ledger

import (
	"unicode"
	"unicode/utf8"
)

// Bounds of what a platform lists, as the store keeps it. A platform's
// own instance ID is short in practice (a RunPod pod ID is 14 characters,
// a Vast.ai ID an integer, a Lambda ID 32 hex digits); 128 bytes leaves
// room for any and refuses a reply that is not an ID at all. A label and
// a GPU model are shown in the chat: longer ones are a broken reply.
const (
	MaxPlatformIDBytes    = 128
	MaxInstanceLabelBytes = 256
	MaxInstanceGPUBytes   = 64
)

// PlatformStates are the states a PlatformInstance's State may hold ("":
// none applied yet).
var PlatformStates = []string{"", "running", "stopped", "terminated", "unknown"}

// CheckPlatformID checks a platform's own instance ID: 1 to
// MaxPlatformIDBytes bytes of valid UTF-8 with no control, format
// (bidirectional marks, zero-width characters) or line-separator
// character, since it is shown in the chat, put in button payloads and
// exported. Errors: EINVALID "platform_id_empty", "platform_id_long",
// "platform_id_chars".
func CheckPlatformID(id string) error {
	return checkListed(id, "platform_id", MaxPlatformIDBytes, true)
}

// checkListed checks one text the platform listed; field names the
// message keys (field_long, field_chars, and field_empty when required).
func checkListed(s, field string, maxBytes int, required bool) error {
	if s == "" {
		if required {
			return Errorc(EINVALID, field+"_empty")
		}
		return nil
	}
	if len(s) > maxBytes {
		return Errorc(EINVALID, field+"_long", len(s), maxBytes)
	}
	for i, r := range s {
		if r == utf8.RuneError || unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) ||
			unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) {
			if r == utf8.RuneError {
				if _, size := utf8.DecodeRuneInString(s[i:]); size != 1 {
					continue // a real U+FFFD, printable
				}
			}
			return Errorc(EINVALID, field+"_chars", s, i)
		}
	}
	return nil
}

// Validate checks what the store keeps of a listed instance: its
// platform (a profile key: lowercase letters, digits, '-' and '_', 1 to
// 32), its ID (CheckPlatformID), a known Status (bound exactly when
// RentalID is set), a known State, a label and GPU model within bounds
// and without control characters, a GPU count within 0..MaxGPUCount (0:
// the platform gave none), and, when PriceOK, a price that is not
// negative nor absurd, with a currency. Errors: EINVALID with a message
// key.
func (in *PlatformInstance) Validate() error {
	if !platformKeyOK(in.Platform) {
		return Errorc(EINVALID, "platform_key", in.Platform)
	}
	if err := CheckPlatformID(in.PlatformID); err != nil {
		return err
	}
	switch in.Status {
	case PlatformAsked, PlatformDeclined:
		if in.RentalID != 0 {
			return Errorc(EINVALID, "platform_status_rental", in.Status)
		}
	case PlatformBound:
		if in.RentalID <= 0 {
			return Errorc(EINVALID, "platform_bound_no_rental", in.PlatformID)
		}
	default:
		return Errorc(EINVALID, "platform_status", in.Status)
	}
	stateOK := false
	for _, s := range PlatformStates {
		stateOK = stateOK || s == in.State
	}
	if !stateOK {
		return Errorc(EINVALID, "platform_state", in.State)
	}
	if err := checkListed(in.Name, "instance_label", MaxInstanceLabelBytes, false); err != nil {
		return err
	}
	if err := checkListed(in.GPU, "instance_gpu", MaxInstanceGPUBytes, false); err != nil {
		return err
	}
	if in.GPUCount < 0 || in.GPUCount > MaxGPUCount {
		return Errorc(EINVALID, "instance_gpu_count", in.GPUCount, MaxGPUCount)
	}
	if in.PriceOK {
		if err := checkListedPrice(in.Price, in.Currency); err != nil {
			return err
		}
	}
	if in.PriceToldOK {
		if err := checkListedPrice(in.PriceTold, in.Currency); err != nil {
			return err
		}
	}
	if in.MessageID < 0 {
		return Errorc(EINVALID, "instance_message", in.MessageID)
	}
	return nil
}

// checkListedPrice checks an hourly price a platform listed.
func checkListedPrice(p Decimal, c Currency) error {
	if p.Sign() < 0 {
		return Errorc(EINVALID, "price_negative", p)
	}
	if err := checkRate(Price{Amount: p, Unit: UnitHour}); err != nil {
		return err
	}
	if got, err := ParseCurrency(string(c)); err != nil || got != c {
		return Errorc(EINVALID, "instance_currency", c)
	}
	return nil
}

// platformKeyOK reports whether p looks like a profile key.
func platformKeyOK(p string) bool {
	if p == "" || len(p) > 32 {
		return false
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
