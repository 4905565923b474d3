"""Provider adapter tests: the genuine SDKs against a loopback server speaking each wire format."""
