package hub

// InstancesRemembered is how many announced instances the hub keeps in
// memory, so tests can see that a flood of forged keys does not grow it.
func (h *Hub) InstancesRemembered() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.instances)
}
