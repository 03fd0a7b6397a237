//! The exact bucket index of a value at the finest scale, with integer operations only: the
//! float's exponent, and its mantissa against a table of the 256 bucket edges of one power
//! of two (the OpenTelemetry specification's lookup-table method), found from a second
//! table by the mantissa's top bits and one comparison.
//!
//! OpenTelemetry's buckets nest: the index at scale `s` is the index at scale `s + 1`
//! shifted right by one (bucket `i` at scale `s` is buckets `2i` and `2i + 1` at `s + 1`,
//! its edges being theirs). So one table at [`FINEST_SCALE`], and a shift, give the exact
//! index at every coarser scale.
//!
//! Scale 8 is the finest because of the tables' flash cost: 256 `u64` edges, 2 KiB, and
//! 512 slice counts (each finer scale doubles both; scale 10 would be 10 KiB, a third of
//! some parts' flash). It is
//! also Prometheus's finest native-histogram schema, and about finer scales little is
//! lost: `B` buckets at scale 8 span only `2^(B / 256)`, a factor of 1.54 for OpenTelemetry's
//! default 160, so any data wider than that downscales below scale 8 anyway.

use crate::sketch::mapping::{IndexMapping, OtelMapping};

/// The finest scale the sketch records at, and the scale of [`EDGES`].
pub(crate) const FINEST_SCALE: i32 = 8;

/// The most halvings below [`FINEST_SCALE`]: scale -10, OpenTelemetry's coarsest, where
/// every float fits in two buckets.
pub(crate) const MAX_DOWNSHIFT: u32 = (FINEST_SCALE - OtelMapping::MIN_SCALE) as u32;

/// The mapping at `downshift` halvings below the finest scale.
pub(crate) fn mapping_at(downshift: u32) -> OtelMapping {
    let scale = FINEST_SCALE.wrapping_sub(downshift.min(MAX_DOWNSHIFT) as i32);
    match OtelMapping::with_scale(scale) {
        Ok(mapping) => mapping,
        Err(_) => <OtelMapping as IndexMapping>::DEFAULT, // never: -10 <= scale <= 8
    }
}

/// `floor(2^(63 + k / 256))` for `k` in `1..=255` at position `k - 1`, then `u64::MAX`
/// (which no mantissa exceeds: the comparison past the last edge).
///
/// A 64-bit mantissa `x` (`2^63 <= x < 2^64`, the value being `x * 2^(e - 63)`) lies above
/// the edge `2^(e + k / 256)` exactly when `x > EDGES[k - 1]`: the edge times `2^(63 - e)`
/// is irrational (`k` is not a multiple of 256), so no integer equals it, and the integer
/// above its floor is above it. Computed with exact integer roots; a test checks every
/// entry with exact big-integer powers (`EDGES[k-1]^256 < 2^(63 * 256 + k) < (EDGES[k-1] +
/// 1)^256`).
#[rustfmt::skip]
pub(super) static EDGES: [u64; 256] = [
    0x8058_d7d2_d5e5_f6b0, 0x80b1_ed4f_d999_ab6c, 0x810b_40a1_d814_06d4,
    0x8164_d1f3_bc03_0773, 0x81be_a170_8dde_6055, 0x8218_af43_73fc_25eb,
    0x8272_fb97_b2a5_894c, 0x82cd_8698_ac2b_a1d7, 0x8328_5071_e0fc_4546,
    0x8383_594e_efb6_ee36, 0x83de_a15b_9541_b132, 0x843a_28c3_acde_4046,
    0x8495_efb3_303e_fd2f, 0x84f1_f656_379c_1a29, 0x854e_3cd8_f9c8_c95d,
    0x85aa_c367_cc48_7b14, 0x8607_8a2f_2364_2a9f, 0x8664_915b_923f_ba03,
    0x86c1_d919_caef_5c87, 0x871f_6196_9e8d_1010, 0x877d_2afe_fd4e_256c,
    0x87db_357f_f698_d791, 0x8839_8146_b919_f1d4, 0x8898_0e80_92da_8527,
    0x88f6_dd5a_f155_ac6b, 0x8955_ee03_618e_5fdc, 0x89b5_40a7_9025_57a3,
    0x8a14_d575_496e_fd9a, 0x8a74_ac9a_7989_6e46, 0x8ad4_c645_2c72_8924,
    0x8b35_22a3_8e1e_1031, 0x8b95_c1e3_ea8b_d6e6, 0x8bf6_a434_adde_0084,
    0x8c57_c9c4_646f_4ddd, 0x8cb9_32c1_bae9_7a95, 0x8d1a_df5b_7e5b_a9e5,
    0x8d7c_cfc0_9c50_e2f7, 0x8ddf_0420_22e6_9cd5, 0x8e41_7ca9_40e3_5a01,
    0x8ea4_398b_45cd_53c0, 0x8f07_3af5_a201_3520, 0x8f6a_8117_e6c8_e5c4,
    0x8fce_0c21_c672_6481, 0x9031_dc43_1466_b1dc, 0x9095_f1ab_c540_ca6b,
    0x90fa_4c8b_eee4_b12a, 0x915e_ed13_c896_89d3, 0x91c3_d373_ab11_c336,
    0x9228_ffdc_10a0_51ac, 0x928e_727d_9531_f9ac, 0x92f4_2b88_f673_aa7c,
    0x935a_2b2f_13e6_e92b, 0x93c0_71a0_eef9_4bc0, 0x9426_ff0f_ab1c_04b6,
    0x948d_d3ac_8ddb_7ed3, 0x94f4_efa8_fef7_0961, 0x955c_5336_8878_94d5,
    0x95c3_fe86_d6cc_7fee, 0x962b_f1cb_b8d9_755f, 0x9694_2d37_2018_5a00,
    0x96fc_b0fb_20ac_4ba2, 0x9765_7d49_f17a_b08e, 0x97ce_9255_ec43_57ab,
    0x9837_f051_8db8_a96f, 0x98a1_976f_7597_e995, 0x990b_87e2_66c1_89a9,
    0x9975_c1dd_4751_8c77, 0x99e0_4593_20b7_fa64, 0x9a4b_1337_1fd1_66ca,
    0x9ab6_2afc_94ff_864a, 0x9b21_8d16_f441_d63c, 0x9b8d_39b9_d54e_5538,
    0x9bf9_3118_f3aa_4cc1, 0x9c65_7368_2ec3_2c2d, 0x9cd2_00db_8a07_74ca,
    0x9d3e_d9a7_2cff_b750, 0x9dab_fdff_6367_a2a9, 0x9e19_6e18_9d47_2420,
    0x9e87_2a27_6f0b_98ff, 0x9ef5_3260_91a1_11ad, 0x9f63_86f8_e28b_a650,
    0x9fd2_2825_6400_dd05, 0xa041_161b_3d01_21bd, 0xa0b0_510f_b971_4fc2,
    0xa11f_d938_4a34_4cf7, 0xa18f_aeca_8544_b6e3, 0xa1ff_d1fc_25ce_a188,
    0xa270_4303_0c49_6818, 0xa2e1_0215_3e91_8f9e, 0xa352_0f68_e802_bb92,
    0xa3c3_6b34_5991_b47b, 0xa435_15ae_09e6_809e, 0xa4a7_0f0c_9576_8ec4,
    0xa519_5786_be9e_f339, 0xa58b_ef53_6dbe_b6ed, 0xa5fe_d6a9_b151_38ea,
    0xa672_0dc0_be08_a20b, 0xa6e5_94cf_eee8_6b1d, 0xa759_6c0e_c55f_f55b,
    0xa7cd_93b4_e965_3569, 0xa842_0bfa_298f_70d1, 0xa8b6_d516_7b32_0e08,
    0xa92b_ef41_fa77_771b, 0xa9a1_5ab4_ea7c_0ef8, 0xaa17_17a7_b569_3979,
    0xaa8d_2652_ec90_7629, 0xab03_86ef_4886_8de0, 0xab7a_39b5_a93e_d337,
    0xabf1_3edf_1626_75e8, 0xac68_96a4_be3f_e929, 0xace0_413f_f83e_5d03,
    0xad58_3eea_42a1_4ac6, 0xadd0_8fdd_43d0_1491, 0xae49_3452_ca35_b80e,
    0xaec2_2c84_cc5c_9465, 0xaf3b_78ad_690a_4374, 0xafb5_1906_e75b_8661,
    0xb02f_0dcb_b6e0_4583, 0xb0a9_5736_6fb7_a3c9, 0xb123_f581_d2ac_258f,
    0xb19e_e8e8_c94f_eb08, 0xb21a_31a6_6618_fe3b, 0xb295_cff5_e47d_b4a3,
    0xb311_c412_a911_2489, 0xb38e_0e38_419f_ae17, 0xb40a_aea2_654b_9840,
    0xb487_a58c_f4a9_c180, 0xb504_f333_f9de_6484, 0xb582_97d3_a8b9_f0d1,
    0xb600_93a8_5ed5_f76b, 0xb67e_e6ee_a3b2_2b8f, 0xb6fd_91e3_28d1_7791,
    0xb77c_94c2_c9d7_25e8, 0xb7fb_efca_8ca4_1e7c, 0xb87b_a337_a174_3833,
    0xb8fb_af47_62fb_9ee9, 0xb97c_1437_5684_4dbe, 0xb9fc_d245_2c0b_9dea,
    0xba7d_e9ae_be5f_ea08, 0xbaff_5ab2_133e_45fb, 0xbb81_258d_5b70_4b6f,
    0xbc03_4a7e_f2e9_fb0c, 0xbc85_c9c5_60e7_b269, 0xbd08_a39f_580c_36be,
    0xbd8b_d84b_b67e_d482, 0xbe0f_6809_8609_93e2, 0xbe93_5317_fc37_8237,
    0xbf17_99b6_7a73_1082, 0xbf9c_3c24_8e24_86f8, 0xc021_3aa1_f0d0_8db0,
    0xc0a6_956e_8836_ca8c, 0xc12c_4cca_6670_9456, 0xc1b2_60f5_ca0f_bb33,
    0xc238_d231_1e3d_6672, 0xc2bf_a0bc_fad9_07c8, 0xc346_ccda_2497_6407,
    0xc3ce_56c9_8d21_b15d, 0xc456_3ecc_5334_cb32, 0xc4de_8523_c2c0_7baa,
    0xc567_2a11_5506_dadd, 0xc5f0_2dd6_b0bb_c3d9, 0xc679_90b5_aa24_5f79,
    0xc703_52f0_4336_c51d, 0xc78d_74c8_abb9_b15c, 0xc817_f681_4164_52b2,
    0xc8a2_d85c_8ffe_2c45, 0xc92e_1a9d_517f_0ecb, 0xc9b9_bd86_6e2f_27a2,
    0xca45_c15a_fcc7_2623, 0xcad2_265e_4290_774d, 0xcb5e_ecd3_b385_97c8,
    0xcbec_14fe_f272_7c5c, 0xcc79_9f23_d115_10e5, 0xcd07_8b86_503d_cdd1,
    0xcd95_da6a_9ff0_6444, 0xce24_8c15_1f84_80e3, 0xceb3_a0ca_5dc6_a55d,
    0xcf43_18cf_1919_18c1, 0xcfd2_f468_3f94_eeb5, 0xd063_33da_ef2b_2594,
    0xd0f3_d76c_75c5_db8c, 0xd184_df62_5169_9ac6, 0xd216_4c02_3056_bcab,
    0xd2a8_1d91_f12a_e45a, 0xd33a_5457_a302_9054, 0xd3cc_f099_859a_c379,
    0xd45f_f29e_0972_c560, 0xd4f3_5aab_cfed_fa1f, 0xd587_2909_ab75_d189,
    0xd61b_5dfe_9f9b_ce06, 0xd6af_f9d1_e13b_a2fd, 0xd744_fcca_d69d_6af4,
    0xd7da_6731_1797_f569, 0xd870_394c_6db3_2c84, 0xd906_7364_d44a_929b,
    0xd99d_15c2_78af_d7b5, 0xda34_20ad_ba4d_8704, 0xdacb_946f_2ac9_cc71,
    0xdb63_714f_8e29_5255, 0xdbfb_b797_daf2_3755, 0xdc94_6791_3a4f_1c91,
    0xdd2d_8185_0832_4c20, 0xddc7_05bc_d378_f7f0, 0xde60_f482_5e0e_9123,
    0xdefb_4e1f_9d10_37f1, 0xdf96_12de_b8f0_4420, 0xe031_430a_0d99_e627,
    0xe0cc_deec_2a94_e111, 0xe168_e6cf_d329_5d23, 0xe205_5aff_fe83_d368,
    0xe2a2_3bc7_d7d9_1225, 0xe33f_8972_be8a_5a51, 0xe3dd_444c_4649_9618,
    0xe47b_6ca0_373d_a88d, 0xe51a_02ba_8e26_d680, 0xe5b9_06e7_7c83_48a8,
    0xe658_7973_68b3_a716, 0xe6f8_5aaa_ee1f_ce22, 0xe798_aada_dd5b_9cbe,
    0xe839_6a50_3c4b_dc68, 0xe8da_9958_464b_42aa, 0xe97c_3840_6c4f_8c56,
    0xea1e_4756_550e_b27b, 0xeac0_c6e7_dd24_392e, 0xeb63_b743_1736_983f,
    0xec07_18b6_4c1c_bddc, 0xecaa_eb8f_fb03_ab40, 0xed4f_301e_d994_2b84,
    0xedf3_e6b1_d418_a491, 0xee99_0f98_0da3_025b, 0xef3e_ab20_e032_bc6b,
    0xefe4_b99b_dcda_f5cb, 0xf08b_3b58_cbe8_b76a, 0xf132_30a7_ad09_4509,
    0xf1d9_99d8_b770_8cc1, 0xf281_773c_59ff_b139, 0xf329_c923_3b6b_ae9c,
    0xf3d2_8fde_3a64_1a5a, 0xf47b_cbbe_6db9_fdde, 0xf525_7d15_2486_cc2c,
    0xf5cf_a433_e653_7290, 0xf67a_416c_733f_846d, 0xf725_5510_c428_8238,
    0xf7d0_df73_0ad1_3bb8, 0xf87c_e0e5_b209_4d9b, 0xf929_59bb_5dd4_ba74,
    0xf9d6_4a46_eb93_9f35, 0xfa83_b2db_722a_033a, 0xfb31_93cc_4227_c3f4,
    0xfbdf_ed6c_e5f0_9c48, 0xfc8e_c011_21e4_47bb, 0xfd3e_0c0c_f486_c174,
    0xfded_d1b4_96a8_9f34, 0xfe9e_115c_7b8f_884b, 0xff4e_cb59_511e_c8a5,
    u64::MAX,
];

/// `EDGES[pos]`, for `pos <= 255` (masked: no bound check, no panic).
#[inline(always)]
fn edge(pos: usize) -> u64 {
    EDGES.get(pos & 0xff).copied().unwrap_or(u64::MAX)
}

/// The mantissas of a power of two cut into 512 equal slices, `[2^63 + j 2^54, 2^63 +
/// (j + 1) 2^54)`: for each, how many of [`EDGES`] lie below its start. The edges are more
/// than a slice apart (`2^63 (2^(1/256) - 1) > 2^54`), so at most one more lies inside it,
/// and one comparison finishes the count: a lookup and a compare instead of a binary
/// search (512 bytes more of flash). Computed at compile time from the edges.
static EDGES_BELOW_SLICE: [u8; 512] = edges_below_slices();

/// [`EDGES_BELOW_SLICE`], by one pass over the slices and the edges.
// In const evaluation an index out of bounds is a compile error, not a run-time panic.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const fn edges_below_slices() -> [u8; 512] {
    let mut below = [0u8; 512];
    let (mut slice, mut edges) = (0usize, 0usize);
    while slice < 512 {
        let start = (1u64 << 63) + ((slice as u64) << 54);
        while edges < 255 && EDGES[edges] < start {
            edges += 1;
        }
        below[slice] = edges as u8; // at most 255
        slice += 1;
    }
    below
}

/// The exact index at [`FINEST_SCALE`] of `2^exponent * x / 2^63`, for a mantissa
/// `2^63 <= x < 2^64`: `256 * exponent`, plus the edges of that power of two below the
/// value, minus one if the value is the power of two itself (an edge: OpenTelemetry's
/// buckets are upper-inclusive, `(b^i, b^(i+1)]`).
#[inline(always)]
fn index_of_mantissa(exponent: i32, x: u64) -> i32 {
    // The slice of `x`: the 9 bits after its leading one. The edges below the slice, and
    // the one edge that may lie inside it (`EDGES[below]`; the sentinel if `below` is 255).
    let slice = ((x >> 54) & 0x1ff) as usize;
    let below = EDGES_BELOW_SLICE.get(slice).map_or(0, |&n| usize::from(n));
    let above = below.wrapping_add(usize::from(x > edge(below))); // 0..=255
    let power_of_two = i32::from(x == 1 << 63);
    // |exponent| <= 1024: the shift is within i32, and `above` is at most 255.
    (exponent << FINEST_SCALE)
        .wrapping_add(above as i32)
        .wrapping_sub(power_of_two)
}

/// The exact index at [`FINEST_SCALE`] of a positive integer (0 has no bucket: the caller
/// counts it as a zero). Integer operations only: a leading-zero count, a shift and the
/// table.
#[inline]
pub(crate) fn of_u64(value: u64) -> i32 {
    let zeros = value.leading_zeros(); // value > 0: at most 63
    let exponent = 63u32.wrapping_sub(zeros) as i32;
    index_of_mantissa(exponent, value << (zeros & 63))
}

/// The SDKs' index at [`FINEST_SCALE`] of the subnormals and of `2^-1022` itself, the
/// lowest bucket: `(-1022 << 8) - 1`.
pub(crate) const LOWEST: i32 = (-1022 << FINEST_SCALE) - 1;

/// The index at [`FINEST_SCALE`] of `f64::MAX`, the highest bucket: `(1024 << 8) - 1`.
pub(crate) const HIGHEST: i32 = (1024 << FINEST_SCALE) - 1;

/// The exact index at [`FINEST_SCALE`] of a positive finite float, from its bits (integer
/// operations only). Subnormals share the bucket of `2^-1022`, as in the SDKs.
#[inline]
pub(crate) fn of_f64(value: f64) -> i32 {
    let bits = value.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i32;
    if field == 0 {
        return LOWEST; // subnormals (and zero, which the caller never passes)
    }
    // The 53-bit significand, its leading one moved to bit 63.
    let x = ((bits & ((1 << 52) - 1)) | (1 << 52)) << 11;
    index_of_mantissa(field.wrapping_sub(1023), x) // the exponent, -1022..=1023
}

/// The lower edge of bucket `index` at [`FINEST_SCALE`], `2^(index / 256)`, rounded down
/// to an integer (0 below 1, `u64::MAX` from `2^64` up): integer operations only, for
/// valuing the counts a downscale drops on the integer path.
pub(crate) fn lower_edge_u64(index: i32) -> u64 {
    let exponent = index >> FINEST_SCALE; // floor
    let mantissa = match ((index & 0xff) as usize).checked_sub(1) {
        // floor(2^(e + k/256)) times 2^(63 - e).
        Some(pos) => edge(pos),
        None => 1 << 63,
    };
    match u32::try_from(exponent) {
        Ok(e) if e < 64 => mantissa >> 63u32.wrapping_sub(e),
        Ok(_) => u64::MAX,
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cmp::Ordering;
    use std::vec;
    use std::vec::Vec;

    /// A tiny unsigned big integer (little-endian 64-bit limbs), for exact powers.
    #[derive(Clone, PartialEq, Eq, Debug)]
    struct Big(Vec<u64>);

    impl Big {
        fn of(x: u128) -> Big {
            let mut b = Big(vec![x as u64, (x >> 64) as u64]);
            b.trim();
            b
        }
        fn pow2(e: u32) -> Big {
            let mut limbs = vec![0u64; (e / 64) as usize + 1];
            limbs[(e / 64) as usize] = 1 << (e % 64);
            Big(limbs)
        }
        fn trim(&mut self) {
            while self.0.len() > 1 && *self.0.last().unwrap() == 0 {
                self.0.pop();
            }
        }
        fn mul(&self, o: &Big) -> Big {
            let mut r = vec![0u64; self.0.len() + o.0.len()];
            for (i, &a) in self.0.iter().enumerate() {
                let mut carry = 0u128;
                for (j, &b) in o.0.iter().enumerate() {
                    let t = u128::from(a) * u128::from(b) + u128::from(r[i + j]) + carry;
                    r[i + j] = t as u64;
                    carry = t >> 64;
                }
                r[i + o.0.len()] = carry as u64;
            }
            let mut b = Big(r);
            b.trim();
            b
        }
        /// `self^(2^k)`, by `k` squarings.
        fn pow_pow2(&self, k: u32) -> Big {
            (0..k).fold(self.clone(), |x, _| x.mul(&x))
        }
        fn bits(&self) -> u32 {
            let top = *self.0.last().unwrap();
            (self.0.len() as u32 - 1) * 64 + (64 - top.leading_zeros())
        }
        fn minus_one(&self) -> Big {
            let mut b = self.clone();
            for limb in b.0.iter_mut() {
                let (v, borrow) = limb.overflowing_sub(1);
                *limb = v;
                if !borrow {
                    break;
                }
            }
            b.trim();
            b
        }
        fn compare(&self, o: &Big) -> Ordering {
            self.0
                .len()
                .cmp(&o.0.len())
                .then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
        }
    }

    /// The exact index of a positive integer at `scale` in `0..=8`, from the definition
    /// alone (no table, no float): the `i` with `2^i < v^(2^scale) <= 2^(i+1)`, that is
    /// `bits(v^(2^scale) - 1) - 1`, and -1 for `v = 1`.
    fn exact_index(value: u64, scale: u32) -> i32 {
        let p = Big::of(u128::from(value)).pow_pow2(scale);
        if p == Big::of(1) {
            return -1;
        }
        p.minus_one().bits() as i32 - 1
    }

    #[test]
    fn every_edge_is_the_floor_of_its_power_of_two() {
        for k in 1..=255u32 {
            let t = EDGES[k as usize - 1];
            let edge = Big::pow2(63 * 256 + k);
            let below = Big::of(u128::from(t)).pow_pow2(8);
            let above = Big::of(u128::from(t) + 1).pow_pow2(8);
            assert_eq!(below.compare(&edge), Ordering::Less, "k {k}");
            assert_eq!(above.compare(&edge), Ordering::Greater, "k {k}");
        }
        assert_eq!(EDGES[255], u64::MAX);
        assert!(EDGES.windows(2).all(|w| w[0] < w[1]));
    }

    /// At most one edge inside each slice, and the counts below each are the edges'.
    #[test]
    fn each_slice_holds_at_most_one_edge() {
        for slice in 0..512u64 {
            let start = (1u64 << 63) + (slice << 54);
            let end = start + ((1 << 54) - 1);
            let below = EDGES[..255].iter().filter(|&&e| e < start).count();
            let inside = EDGES[..255]
                .iter()
                .filter(|&&e| start <= e && e <= end)
                .count();
            assert_eq!(
                usize::from(EDGES_BELOW_SLICE[slice as usize]),
                below,
                "slice {slice}"
            );
            assert!(inside <= 1, "slice {slice}");
        }
    }

    fn integers() -> Vec<u64> {
        let mut values: Vec<u64> = (1..600).collect();
        for e in 0..64 {
            let p = 1u64 << e;
            values.extend([p, p - 1, p + 1, p.wrapping_mul(3) | 1]);
        }
        // Each side of every edge at scale 8, in a few powers of two.
        for e in [8u32, 20, 40, 63] {
            for &t in &EDGES[..255] {
                let x = t >> (63 - e);
                values.extend([x, x + 1, x.saturating_sub(1)]);
            }
        }
        let mut rng = crate::test_rng::Xorshift64(0x2545_f491_4f6c_dd1d);
        for _ in 0..3000 {
            let v = rng.next_u64() >> (rng.next_u64() % 64);
            values.push(v.max(1));
        }
        values.push(u64::MAX);
        values.retain(|&v| v > 0);
        values
    }

    /// The table's index is the exact one at scale 8 and, shifted, at every scale from 8
    /// down to 0, each checked against the definition (which proves the nesting too).
    #[test]
    fn the_integer_index_is_exact_at_every_scale() {
        for v in integers() {
            let fine = of_u64(v);
            for scale in 0..=8u32 {
                assert_eq!(
                    fine >> (8 - scale),
                    exact_index(v, scale),
                    "v {v} scale {scale}"
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Any integer at all, and the integers beside it: the exact index at every scale
        /// from 8 to 0, against the definition.
        #[test]
        fn any_integer_has_its_exact_index(v in 1u64.., shift in 0u32..64) {
            let v = (v >> shift).max(1);
            for v in [v, v.saturating_add(1), (v - 1).max(1)] {
                let fine = of_u64(v);
                for scale in 0..=8u32 {
                    proptest::prop_assert_eq!(fine >> (8 - scale), exact_index(v, scale));
                }
            }
        }
    }

    /// A float `m * 2^q` (`m` a 53-bit integer) is `256 q` buckets above `m` (its edges
    /// move with the power of two), so the float index is exact as the integer one is; and
    /// the float of an integer below 2^53 is in the integer's bucket.
    #[test]
    fn the_float_index_is_exact() {
        let mut rng = crate::test_rng::Xorshift64(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let m = (rng.next_u64() >> 11) | (1 << 52);
            let q = (rng.next_u64() % 2000) as i32 - 1074;
            let v = libm::ldexp(m as f64, q);
            if v > f64::MIN_POSITIVE && v.is_finite() {
                assert_eq!(of_f64(v), of_u64(m) + 256 * q, "m {m} q {q}");
            }
        }
        for v in integers().into_iter().filter(|&v| v < 1 << 53) {
            assert_eq!(of_f64(v as f64), of_u64(v), "{v}");
        }
        assert_eq!(of_f64(f64::MIN_POSITIVE), LOWEST);
        assert_eq!(of_f64(5e-324), LOWEST);
        assert_eq!(of_f64(1.0), -1);
        assert_eq!(of_f64(1.0f64.next_up()), 0);
        assert_eq!(of_f64(f64::MAX), (1024 << 8) - 1);
    }

    #[test]
    fn lower_edges_are_below_the_bucket() {
        for v in integers() {
            let lo = lower_edge_u64(of_u64(v));
            // The edge is exclusive, and rounded down: below every value of the bucket.
            assert!(lo < v, "v {v} lo {lo}");
        }
        assert_eq!(lower_edge_u64(-1), 0);
        assert_eq!(lower_edge_u64(256 * 64), u64::MAX);
        assert_eq!(lower_edge_u64(256 * 10), 1024);
    }
}
