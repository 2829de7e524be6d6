package scheduler

// Messages exposes the catalog to the black-box tests.
func Messages() map[string][2]string { return messages }
