# Writes the .npy/.npz/safetensors files the [io] tests read: numpy's own writer is the reference.
# Run with the JAX venv:  /work/venv-jax/bin/python tests/data/io/make_io_data.py  (from the repository root)
# (numpy 2.4.6, ml_dtypes 0.7.0, jax 0.10.2 when the checked-in files were made.)
import json, os, struct
import numpy as np, ml_dtypes, jax.numpy as jnp

out = os.path.dirname(os.path.abspath(__file__))
p = lambda n: os.path.join(out, n)

# One 2x3 array per dtype, values v[i] = i - 2 (bool: i % 2 == 1), saved as <dtype>.npy and together in all.npz.
names = ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'float16', 'float32',
         'float64']
arrays = {}
for n in names:
    i = np.arange(6).reshape(2, 3)
    a = (i % 2 == 1) if n == 'bool' else (i * 7 + 1).astype(n) if n.startswith('u') else (i - 2).astype(n)
    arrays[n] = a
# bfloat16 as JAX saves it: np.save of a jnp bfloat16 array writes descr '<V2'.
arrays['bfloat16'] = np.asarray(jnp.array([[-2, -1.5, 0], [0.5, 1, 3.25]], dtype=jnp.bfloat16))
for n, a in arrays.items():
    np.save(p(n + '.npy'), a)
np.savez(p('all.npz'), **arrays)
np.savez_compressed(p('all_compressed.npz'), **arrays)

# Layouts and headers.
np.save(p('fortran_f64.npy'), np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 2, 2) * 0.5))
np.save(p('big_endian_i4.npy'), np.arange(5, dtype='>i4') * 1000 - 2000)
np.save(p('scalar_f32.npy'), np.float32(3.5))
np.save(p('empty_0x3_f32.npy'), np.zeros((0, 3), np.float32))
with open(p('v2_i16.npy'), 'wb') as f:
    np.lib.format.write_array(f, np.arange(4, dtype=np.int16), version=(2, 0))
with open(p('v3_u8.npy'), 'wb') as f:
    np.lib.format.write_array(f, np.arange(3, dtype=np.uint8) + 250, version=(3, 0))

# safetensors, written here by hand from the format's description (header length, JSON header, bytes).
def write_safetensors(path, tensors, metadata):
    header, blobs, off = {}, [], 0
    codes = {'float32': 'F32', 'int64': 'I64', 'bfloat16': 'BF16', 'bool': 'BOOL'}
    for k, a in tensors.items():
        b = np.ascontiguousarray(a).tobytes()
        header[k] = {'dtype': codes[str(a.dtype)], 'shape': list(a.shape), 'data_offsets': [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header['__metadata__'] = metadata
    h = json.dumps(header).encode()
    h += b' ' * (-len(h) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + b''.join(blobs))
write_safetensors(p('small.safetensors'),
                  {'w': np.array([[1.5, -2], [0.25, 8]], np.float32), 'step': np.array(7, np.int64),
                   'b': arrays['bfloat16'], 'mask': np.array([True, False, True])},
                  {'format': 'pt', 'note': 'made by make_io_data.py'})
