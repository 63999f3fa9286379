package lexers

import (
	. "github.com/alecthomas/chroma/v2" // nolint
)

// Markdown lexer.
var Markdown = Register(MustNewLexer(
	&Config{
		Name:      "markdown",
		Aliases:   []string{"md", "mkd"},
		Filenames: []string{"*.md", "*.mkd", "*.markdown"},
		MimeTypes: []string{"text/x-markdown"},
	},
	markdownRules,
))

func markdownRules() Rules {
	return Rules{
		"root": {
			{Pattern: `^(#[^#].+\n)`, Type: ByGroups(GenericHeading), Mutator: nil},
			{Pattern: `^(#{2,6}.+\n)`, Type: ByGroups(GenericSubheading), Mutator: nil},
			{Pattern: `^(\s*)([*-] )(\[[ xX]\])( .+\n)`, Type: ByGroups(Text, Keyword, Keyword, UsingSelf("inline")), Mutator: nil},
			{Pattern: `^(\s*)([*-])(\s)(.+\n)`, Type: ByGroups(Text, Keyword, Text, UsingSelf("inline")), Mutator: nil},
			{Pattern: `^(\s*)([0-9]+\.)( .+\n)`, Type: ByGroups(Text, Keyword, UsingSelf("inline")), Mutator: nil},
			{Pattern: `^(\s*>\s)(.+\n)`, Type: ByGroups(Keyword, GenericEmph), Mutator: nil},
			{Pattern: "^(```\\n)([\\w\\W]*?)(^```$)", Type: ByGroups(String, Text, String), Mutator: nil},
			{
				Pattern: "^(```)(\\w+)(\\n)([\\w\\W]*?)(^```$)",
				Type:    UsingByGroup(2, 4, String, String, String, Text, String),
				Mutator: nil,
			},
			Include("inline"),
		},
		"inline": {
			{Pattern: `\\.`, Type: Text, Mutator: nil},
			{Pattern: `(\s)(\*|_)((?:(?!\2).)*)(\2)((?=\W|\n))`, Type: ByGroups(Text, GenericEmph, GenericEmph, GenericEmph, Text), Mutator: nil},
			{Pattern: `(\s)((\*\*|__).*?)\3((?=\W|\n))`, Type: ByGroups(Text, GenericStrong, GenericStrong, Text), Mutator: nil},
			{Pattern: `(\s)(~~[^~]+~~)((?=\W|\n))`, Type: ByGroups(Text, GenericDeleted, Text), Mutator: nil},
			{Pattern: "`[^`]+`", Type: LiteralStringBacktick, Mutator: nil},
			{Pattern: `[@#][\w/:]+`, Type: NameEntity, Mutator: nil},
			{Pattern: `(!?\[)([^]]+)(\])(\()([^)]+)(\))`, Type: ByGroups(Text, NameTag, Text, Text, NameAttribute, Text), Mutator: nil},
			{Pattern: `.|\n`, Type: Text, Mutator: nil},
		},
	}
}
