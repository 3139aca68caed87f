package deploy

// ExportReading is Format.Export and the names of the parameters and
// options the format read through the point's registry row (nil when the
// format does not express the type).
func ExportReading(f *Format, pt *Point) (*Export, []string, error) {
	e, r, err := f.export(pt)
	if r == nil {
		return e, nil, err
	}
	return e, r.read, err
}
