package preprocess

// The pieces of Run, exported for the external tests.
type (
	Splitter   = splitter
	Classifier = classifier
	Recorder   = recorder
)

var (
	NewSplitter   = newSplitter
	NewClassifier = newClassifier
	NewRecorder   = newRecorder
)
