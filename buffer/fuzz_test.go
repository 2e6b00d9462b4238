package buffer

import "testing"

// FuzzApply decodes a list of edits from the input and applies them to a Doc
// and to the reference model; any difference or panic fails.
func FuzzApply(f *testing.F) {
	f.Add("héllo\r\nwörld 😀\rx\n", []byte{0, 1, 0, 3, 2, 0, 1, 1, 2, 1, 0, 4})
	f.Add("", []byte{0, 0, 0, 0, 5, 1})
	f.Add("a\r\nb", []byte{0, 1, 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, text string, ops []byte) {
		d := NewDoc(text)
		for len(ops) >= 6 {
			op := ops[:6]
			ops = ops[6:]
			enc := Encoding(op[0] % 3)
			r := &Range{Position{uint32(op[1] % 8), uint32(op[2] % 16)}, Position{uint32(op[3] % 8), uint32(op[4] % 16)}}
			if r.Start.after(r.End) {
				r.Start, r.End = r.End, r.Start
			}
			ins := pieces[int(op[5])%len(pieces)]
			if op[5] > 200 {
				r = nil
			}
			want := refApply(text, r, ins, enc)
			if err := d.Apply(r, ins, enc); err != nil {
				t.Fatal(err)
			}
			if got := d.String(); got != want {
				t.Fatalf("got %q want %q", got, want)
			}
			text = want
		}
	})
}
