# Built by scripts/build-native.mjs, which passes blst_dir (blst's sources, inside the c-kzg
# package) and blst_no_asm (1 where blst's assembly cannot be used).
{
  "variables": {
    "blst_dir%": "",
    "blst_no_asm%": 0
  },
  "targets": [
    {
      "target_name": "coffer_bls12_381",
      "sources": ["bls12_381.c", "<(blst_dir)/src/server.c"],
      "include_dirs": ["<(blst_dir)/bindings"],
      "cflags": ["-fno-builtin", "-Wno-unused-parameter"],
      "xcode_settings": {"OTHER_CFLAGS": ["-fno-builtin"]},
      "conditions": [
        ["blst_no_asm==1", {
          "defines": ["__BLST_NO_ASM__"]
        }, {
          # The portable build picks the ADX code paths at run time, on CPUs that have them.
          "defines": ["__BLST_PORTABLE__"],
          "sources": ["<(blst_dir)/build/assembly.S"]
        }]
      ]
    }
  ]
}
