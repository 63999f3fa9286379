package redact

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// ruleKeywords are the keywords of all the rules, lower case: no rule
// finds a secret in a text that holds none of them (nor "PRIVATE KEY"),
// so Redact tells such a text apart before the rules are built. Building
// them was most of what the first log line of a print-mode turn cost
// (0.6 ms of CPU and 365 KB allocated in every process), and the values
// a process logs first (its command, directories and model) hold none.
// TestRuleKeywordsAreTheRules fails until a rule's new keyword is added.
var ruleKeywords = []string{
	"--access-token", "--api-key", "--apikey", "--auth-token", "--client-secret", "--pass",
	"--secret", "--token", "4b1d", "://", ":aa", "<add key=", "_auth", "_authtoken",
	"_gitlab_session=", "_live_", "_mmk", "_password", "_prod_", "_pub", "_test_", "a3-", "a3t",
	"abia", "absk", "acca", "access", "accountkey=", "adafruit", "administrator_login_password",
	"adobe", "age-secret-key-1", "agpa", "aida", "airtable", "aiza", "akcp", "akia", "algolia",
	"alibaba", "anpa", "api", "api-", "api_org_", "aroa", "artifactory", "asana", "asia",
	"atatt3", "atlassian", "atlasv1", "auth", "authorization", "authress_", "basic", "beamer",
	"bearer", "bedrock-api-key-", "bintray", "bitbucket", "bittrex",
	"bundle_enterprise__contribsys__com", "bundle_gems__contribsys__com", "clojars_",
	"cloudflare", "cmvmd", "co_api_key", "codecov", "cohere", "coinbase", "confluence",
	"confluent", "contentful", "credential", "creds", "curl", "dapi", "datadog", "discord",
	"dnkey", "doo_v1_", "dop_v1_", "dor_v1_", "dp.pt.", "droneci", "dropbox", "dt0c01.",
	"duffel_", "eaaa", "eaac", "eaam", "enterprise.contribsys.com", "etsy", "ext_", "ey", "eyj",
	"eyjrijoi", "ezak", "eztk", "facebook", "fastly", "finicity", "finnhub", "fio-u-", "flickr",
	"flwpubk_test", "flwseck_test", "fm1", "fm2_", "fo1_", "freshbooks", "gems.contribsys.com",
	"gho_", "ghp_", "ghr_", "ghs_", "ghu_", "github_pat_", "gitter", "glagent-", "glc_", "glcbt-",
	"gldt-", "glffct-", "glft-", "glimt-", "gloas-", "glpat-", "glptt-", "glrt-", "glsa_",
	"glsoat-", "gocardless", "gocspx-", "gr1348941", "heroku", "hf_", "hooks.slack.com",
	"hrku-aa", "hubspot", "hvb.", "hvr.", "hvs.", "ico-", "incomingwebhook", "intercom", "intra",
	"jfrog", "jira", "key", "kraken", "kucoin", "launchdarkly", "lin_api_", "linear", "linked-in",
	"linked_in", "linkedin", "live_", "live_pub", "looker", "ltai", "machine", "mailchimp",
	"mailgun", "mapbox", "mariadb", "mattermost", "meraki", "message-bird", "message_bird",
	"messagebird", "mysql", "netlify", "new-relic", "new-york-times", "new_relic", "newrelic",
	"newyorktimes", "npm_", "nrak", "nrii-", "nrjs-", "ntn_", "nytimes", "okta", "ops_", "p8e-",
	"pass", "passw", "passwd", "password", "pat.", "plaid", "pmak-", "pnu_", "pplx-", "private",
	"private-ai", "private_ai", "private_key_id", "privateai", "pscale_oauth_", "pscale_pw_",
	"pscale_tkn_", "pul-", "pwd", "pypi-age", "pypi-ageichlwas5vcmc", "q~", "rapidapi", "rdme_",
	"rk_live", "rk_prod", "rk_test", "rubygems_", "s-s4t2af-", "s-s4t2ud-", "s.", "sat.", "sc_",
	"scauth_", "secret", "secret_key", "sendbird", "sentry", "sg.", "sgp_", "sha256~",
	"sharedaccesskey=", "shippo_", "shpat_", "shpca_", "shppa_", "shpss_", "sig=", "sk", "sk-",
	"sk-ant-", "sk-ant-admin01", "sk-ant-api03", "sk_live", "sk_prod", "sk_test", "sm_aat",
	"sm_pat", "sm_sat", "sntrys_eyjpyxqio", "sntryu_", "snyk", "sonar", "sourcegraph", "sq0atp-",
	"squarespace", "sshpass", "sumo", "t3blbkfj", "telegr", "test_", "test_pub", "tfp_", "tk-us-",
	"token", "travis", "twitch", "twitter", "v1.0-", "webhook.office.com", "webhookb2", "whsec_",
	"xapp", "xkeysib-", "xox", "xoxa", "xoxb", "xoxe-", "xoxe.xoxb-", "xoxe.xoxp-", "xoxo",
	"xoxp-", "xoxr", "xoxs", "xray", "ya29.", "yandex", "zendesk", "zxlk",
}

// keywordsOnly indexes ruleKeywords, without the rules (Redact).
var keywordsOnly = sync.OnceValue(func() *keywordIndex { return indexWords(ruleKeywords) })

// rulesBuilt is set once the rules are (compiledRules): from then on
// the rules' own index is as quick.
var rulesBuilt atomic.Bool

// mayHoldSecret reports whether a rule could find a secret in view (an
// unescapeBreaks text): whether it holds a keyword or a PEM block's mark.
func mayHoldSecret(view string) bool {
	return strings.Contains(view, "PRIVATE KEY") || keywordsOnly().holds(view)
}

// indexWords indexes words (lower case, ASCII, two bytes or more) for
// holds alone: it knows no rules.
func indexWords(words []string) *keywordIndex {
	k := &keywordIndex{words: slices.Clone(words)}
	for id, w := range k.words {
		p := pairIndex(w[0], w[1])
		if k.pair[p] == 0 {
			k.pairs = append(k.pairs, nil)
			k.pair[p] = uint16(len(k.pairs))
		}
		k.pairs[k.pair[p]-1] = append(k.pairs[k.pair[p]-1], id)
	}
	return k
}

// holds reports whether s holds one of the keywords (ASCII case folded).
func (k *keywordIndex) holds(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		p := k.pair[pairIndex(s[i], s[i+1])]
		if p == 0 {
			continue
		}
		for _, id := range k.pairs[p-1] {
			if hasPrefixFold(s[i:], k.words[id]) {
				return true
			}
		}
	}
	return false
}
