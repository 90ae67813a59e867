//! The only module that imports wgpu: adapters, fingerprints, devices, buffers, pipelines, timestamps.
