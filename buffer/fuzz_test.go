package buffer

import "testing"

// FuzzApply decodes a list of edits from the input and applies them to a Doc
// and to the reference model; any difference or panic fails. A non-zero
// cut starts from chunks of about cut%16+1 bytes, cut/16+1 to a block, so
// that short inputs put chunk and block boundaries under the edits.
func FuzzApply(f *testing.F) {
	f.Add("héllo\r\nwörld 😀\rx\n", uint8(0), []byte{0, 1, 0, 3, 2, 0, 1, 1, 2, 1, 0, 4})
	f.Add("héllo\r\nwörld 😀\rx\n", uint8(3), []byte{0, 1, 0, 3, 2, 0, 1, 1, 2, 1, 0, 4})
	f.Add("", uint8(0), []byte{0, 0, 0, 0, 5, 1})
	f.Add("a\r\nb", uint8(0), []byte{0, 1, 0, 1, 0, 0})
	f.Add("a\r\nb", uint8(2), []byte{0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 6})
	f.Add("ab\ncd\r\nef\rgh", uint8(1), []byte{1, 0, 1, 2, 1, 5, 2, 1, 1, 1, 1, 0})
	f.Fuzz(func(t *testing.T, text string, cut uint8, ops []byte) {
		d := NewDoc(text)
		if cut > 0 {
			d = newDocCut(text, int(cut%16)+1, int(cut/16)+1)
		}
		checkInvariants(t, d)
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
			if d.Len() != len(want) || d.LineCount() != refLines(want) {
				t.Fatalf("len %d lines %d, want %d %d", d.Len(), d.LineCount(), len(want), refLines(want))
			}
			checkInvariants(t, d)
			text = want
		}
	})
}
