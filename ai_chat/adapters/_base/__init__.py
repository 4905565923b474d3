"""What the provider adapters share (private): the client they may own, the SDK skeleton,
the release of a streaming response, and the request and stream mappings every provider
does alike. Nothing here imports a provider SDK; ``sdk`` needs httpx2, which each SDK
extra brings."""
