package view

import (
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// PlatformName is a platform's display name in lang: in Chinese its
// Chinese name where it has one (阿里云, 恒源云, 矩池云), else the
// profile's name ("RunPod"), else the key as stored (a platform no
// profile knows).
func PlatformName(lang, key string) string {
	p, ok := ledger.LookupProfile(key)
	switch {
	case !ok:
		return key
	case p.NameZH != "" && chat.NormLang(lang) == chat.LangZH:
		return p.NameZH
	case p.Name != "":
		return p.Name
	}
	return key
}

// PlatformWord is how a reply names a record's platform beside its other
// facts ("autodl RTX 4090"): the key, as the user types it, except in
// Chinese where the platform has a Chinese name: a Chinese reader knows
// 恒源云, not gpushare.
func PlatformWord(lang, key string) string {
	if chat.NormLang(lang) == chat.LangZH {
		if p, ok := ledger.LookupProfile(key); ok && p.NameZH != "" {
			return p.NameZH
		}
	}
	return key
}
