package facts

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConstraintsKeepFactsAndRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []string
	}{
		{text: "Remember that the codename is Falcon.", want: []string{"Remember that the codename is Falcon."}},
		{text: "Please look. Note that staging runs on port 8443.", want: []string{"Note that staging runs on port 8443."}},
		{text: "FACT07: the staging port is 7407", want: []string{"FACT07: the staging port is 7407"}},
		{text: "IMPORTANT: keep the old API", want: []string{"IMPORTANT: keep the old API"}},
		{text: "Never touch vendor/. Please be quick.", want: []string{"Never touch vendor/."}},
		{text: "The retry limit is 5. Thanks!", want: []string{"The retry limit is 5."}},
		{text: "The config lives in /etc/app/config.toml.", want: []string{"The config lives in /etc/app/config.toml."}},
		{text: "Turn 5: run the tests of package p5.", want: nil},
		{text: "That is all for this step.", want: nil},
		{text: "Add a test for the lexer.", want: nil},
	}
	for _, tt := range tests {
		got := constraints(tt.text)
		require.Equal(t, tt.want, got, "constraints(%q)", tt.text)
	}
}
