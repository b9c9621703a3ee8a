//! Vision ops: `vision.roi_align`, `vision.roi_pool`, `vision.get_valid_counts`,
//! `vision.non_max_suppression`, `vision.all_class_non_max_suppression`,
//! `vision.multibox_transform_loc`.

use crate::dtype::DataType;
use crate::entities::{PrimExpr, Ty};
use crate::prim::BinOp;
use crate::ty::TyData;

use super::cx::OpCx;
use super::{InferError, Rule};
use crate::op::{OpId, ops};

/// The rule of a vision op.
pub(super) const fn rule(id: OpId) -> Option<Rule> {
    Some(Rule::Infer(match id {
        ops::VISION_ROI_ALIGN | ops::VISION_ROI_POOL => roi,
        ops::VISION_GET_VALID_COUNTS => get_valid_counts,
        ops::VISION_NON_MAX_SUPPRESSION => nms,
        ops::VISION_ALL_CLASS_NON_MAX_SUPPRESSION => all_class_nms,
        ops::VISION_MULTIBOX_TRANSFORM_LOC => multibox_transform_loc,
        _ => return None,
    }))
}

fn dims(t: &super::cx::TensorInfo) -> Option<Vec<PrimExpr>> {
    t.dims().map(<[PrimExpr]>::to_vec)
}

fn roi(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let data = cx.tensor_arg(0)?;
    let rois = cx.tensor_arg(1)?;
    if !data.unknown_ndim() && data.ndim != 4 {
        return Err(cx.err(format!("expects 4-d data, but was given {}", cx.q(data.ty))));
    }
    if !rois.unknown_ndim() && rois.ndim != 2 {
        return Err(cx.err(format!("expects 2-d rois, but was given {}", cx.q(rois.ty))));
    }
    let layout = cx.attr_str("layout").unwrap_or("NCHW").to_string();
    if layout != "NCHW" && layout != "NHWC" {
        return Err(cx.err(format!("does not support the layout `{layout}`")));
    }
    if let Some(r) = dims(&rois)
        && let Some(n) = cx.as_int(r[1])
        && n != 5
    {
        return Err(cx.err(format!("expects rois of 5 values each, but was given {}", cx.q(rois.ty))));
    }
    let (Some(d), Some(r)) = (dims(&data), dims(&rois)) else {
        return Ok(cx.tensor_ndim(data.dtype, 4, data.vdevice));
    };
    let ps = cx.attr_ints("pooled_size").unwrap_or_else(|| vec![1, 1]);
    let (ph, pw) = (cx.i64(ps[0]), cx.i64(*ps.get(1).unwrap_or(&ps[0])));
    let out = if layout == "NCHW" { vec![r[0], d[1], ph, pw] } else { vec![r[0], ph, pw, d[3]] };
    Ok(cx.tensor_dims(out, data.dtype, data.vdevice))
}

fn get_valid_counts(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let data = cx.tensor_arg(0)?;
    if data.ndim != -1 && data.ndim != 3 {
        return Err(cx.err(format!("expects 3-d data, but was given {}", cx.q(data.ty))));
    }
    let vd = data.vdevice.clone();
    let fields = match dims(&data) {
        None => vec![
            cx.tensor_ndim(DataType::INT32, 1, vd.clone()),
            cx.tensor_ndim(data.dtype, 3, vd.clone()),
            cx.tensor_ndim(DataType::INT32, 2, vd),
        ],
        Some(d) => vec![
            cx.tensor_dims(vec![d[0]], DataType::INT32, vd.clone()),
            cx.tensor_dims(vec![d[0], d[1], d[2]], data.dtype, vd.clone()),
            cx.tensor_dims(vec![d[0], d[1]], DataType::INT32, vd),
        ],
    };
    Ok(cx.mk(TyData::Tuple(fields)))
}

fn nms(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let data = cx.tensor_arg(0)?;
    let vc = cx.tensor_arg(1)?;
    let idx = cx.tensor_arg(2)?;
    for (t, nd, what) in [(&data, 3, "data"), (&vc, 1, "valid_count"), (&idx, 2, "indices")] {
        if t.ndim != -1 && t.ndim != nd {
            return Err(cx.err(format!("expects a {nd}-d `{what}`, but was given {}", cx.q(t.ty))));
        }
    }
    let vd = data.vdevice.clone();
    let d = dims(&data);
    if cx.attr_bool("return_indices", true) {
        let soft = cx.attr("soft_nms_sigma").and_then(|v| v.as_f64()).unwrap_or(0.0) > 0.0;
        let one = cx.i64(1);
        let mut fields = Vec::new();
        match &d {
            None => {
                if soft {
                    fields.push(cx.tensor_ndim(data.dtype, 3, vd.clone()));
                }
                fields.push(cx.tensor_ndim(DataType::INT32, 2, vd.clone()));
                fields.push(cx.tensor_ndim(DataType::INT32, 2, vd));
            }
            Some(d) => {
                if soft {
                    fields.push(cx.tensor_dims(d.clone(), data.dtype, vd.clone()));
                }
                fields.push(cx.tensor_dims(vec![d[0], d[1]], DataType::INT32, vd.clone()));
                fields.push(cx.tensor_dims(vec![d[0], one], DataType::INT32, vd));
            }
        }
        return Ok(cx.mk(TyData::Tuple(fields)));
    }
    match d {
        Some(d) => Ok(cx.tensor_dims(d, data.dtype, vd)),
        None => Ok(cx.tensor_ndim(data.dtype, 3, vd)),
    }
}

fn all_class_nms(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let boxes = cx.tensor_arg(0)?;
    let scores = cx.tensor_arg(1)?;
    if boxes.ndim != 3 || scores.ndim != 3 {
        return Err(cx.err(format!(
            "expects 3-d boxes and scores, but was given {} and {}",
            cx.q(boxes.ty),
            cx.q(scores.ty)
        )));
    }
    let vd = boxes.vdevice.clone();
    let (Some(b), Some(s)) = (dims(&boxes), dims(&scores)) else {
        let onnx = cx.attr_str("output_format").unwrap_or("onnx") == "onnx";
        let fields = if onnx {
            vec![cx.tensor_ndim(DataType::INT64, 2, vd.clone()), cx.tensor_ndim(DataType::INT64, 1, vd)]
        } else {
            vec![
                cx.tensor_ndim(DataType::INT64, 3, vd.clone()),
                cx.tensor_ndim(DataType::FLOAT32, 2, vd.clone()),
                cx.tensor_ndim(DataType::INT64, 1, vd),
            ]
        };
        return Ok(cx.mk(TyData::Tuple(fields)));
    };
    let (batch, classes, nboxes) = (b[0], s[1], b[1]);
    if cx.attr_str("output_format").unwrap_or("onnx") == "onnx" {
        let t = cx.bin(BinOp::Mul, batch, classes);
        let total = cx.bin(BinOp::Mul, t, nboxes);
        let three = cx.i64(3);
        let one = cx.i64(1);
        let a = cx.tensor_dims(vec![total, three], DataType::INT64, vd.clone());
        let c = cx.tensor_dims(vec![one], DataType::INT64, vd);
        return Ok(cx.mk(TyData::Tuple(vec![a, c])));
    }
    let per = cx.bin(BinOp::Mul, classes, nboxes);
    let two = cx.i64(2);
    let a = cx.tensor_dims(vec![batch, per, two], DataType::INT64, vd.clone());
    let b2 = cx.tensor_dims(vec![batch, per], DataType::FLOAT32, vd.clone());
    let c = cx.tensor_dims(vec![batch], DataType::INT64, vd);
    Ok(cx.mk(TyData::Tuple(vec![a, b2, c])))
}

fn multibox_transform_loc(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let cls = cx.tensor_arg(0)?;
    let loc = cx.tensor_arg(1)?;
    let anchor = cx.tensor_arg(2)?;
    for (t, nd, what) in [(&cls, 3, "cls_pred"), (&loc, 2, "loc_pred"), (&anchor, 3, "anchor")] {
        if !t.unknown_ndim() && t.ndim != nd {
            return Err(cx.err(format!("expects a {nd}-d `{what}`, but was given {}", cx.q(t.ty))));
        }
    }
    for t in [&loc, &anchor] {
        if !cls.dtype.is_void() && !t.dtype.is_void() && cls.dtype != t.dtype {
            return Err(cx.err(format!("the inputs have different dtypes: {} and {}", cx.q(cls.ty), cx.q(t.ty))));
        }
    }
    let vd = cls.vdevice.clone();
    let Some(c) = dims(&cls) else {
        let a = cx.tensor_ndim(cls.dtype, 3, vd.clone());
        let b = cx.tensor_ndim(cls.dtype, 3, vd);
        return Ok(cx.mk(TyData::Tuple(vec![a, b])));
    };
    let four = cx.i64(4);
    let boxes = cx.tensor_dims(vec![c[0], c[2], four], cls.dtype, vd.clone());
    let scores = cx.tensor_dims(vec![c[0], c[1], c[2]], cls.dtype, vd);
    Ok(cx.mk(TyData::Tuple(vec![boxes, scores])))
}
