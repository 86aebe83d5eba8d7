//! Triangle meshes of display shapes (`shape mesh on b { file = "part.stl"; }`): STL
//! (binary and ASCII) and Wavefront OBJ (`v` and `f` lines; polygons become fans).
//! Only the geometry is read: normals, texture coordinates and materials are dropped,
//! the viewer computes its own normals.

/// Triangle corners, three per triangle, in the file's units.
pub type Triangles = Vec<[f32; 3]>;

/// Reads a mesh by the file's extension (`.stl`, `.obj`, case-insensitive).
pub fn parse_mesh(name: &str, bytes: &[u8]) -> Result<Triangles, String> {
    let ext = name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    let tris = match ext.as_str() {
        "stl" => parse_stl(bytes)?,
        "obj" => parse_obj(&text(bytes)?)?,
        _ => return Err("the file name does not end in `.stl` or `.obj`".into()),
    };
    if tris.is_empty() {
        return Err("it holds no triangles".into());
    }
    if let Some(k) = tris.iter().position(|v| v.iter().any(|x| !x.is_finite())) {
        return Err(format!(
            "triangle {} has a coordinate that is not a finite number",
            k / 3 + 1
        ));
    }
    Ok(tris)
}

fn text(bytes: &[u8]) -> Result<String, String> {
    String::from_utf8(bytes.to_vec()).map_err(|e| format!("it is not UTF-8 text ({e})"))
}

/// Binary STL when the size matches 84 + 50 n for the triangle count n in its header
/// (an ASCII file may also begin with `solid`), ASCII otherwise.
fn parse_stl(b: &[u8]) -> Result<Triangles, String> {
    if b.len() >= 84 {
        let n = u32::from_le_bytes([b[80], b[81], b[82], b[83]]) as usize;
        if n.checked_mul(50).and_then(|x| x.checked_add(84)) == Some(b.len()) {
            let f = |o: usize| f32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
            let mut out = Vec::with_capacity(3 * n);
            for t in 0..n {
                // 12 bytes of normal, 3 corners of 12 bytes, 2 attribute bytes.
                let base = 84 + 50 * t + 12;
                for c in 0..3 {
                    let o = base + 12 * c;
                    out.push([f(o), f(o + 4), f(o + 8)]);
                }
            }
            return Ok(out);
        }
    }
    let t = text(b).map_err(|e| format!("neither binary STL (size) nor ASCII STL: {e}"))?;
    if !t.trim_start().starts_with("solid") {
        return Err(
            "neither binary STL (its size is not 84 + 50 × its triangle count) \
                    nor ASCII STL (it does not begin with `solid`)"
                .into(),
        );
    }
    let mut out = Vec::new();
    for (k, line) in t.lines().enumerate() {
        let mut w = line.split_whitespace();
        if w.next() == Some("vertex") {
            out.push(point(&mut w).ok_or(format!("line {}: `vertex` needs 3 numbers", k + 1))?);
        }
    }
    if out.len() % 3 != 0 {
        return Err(format!("{} vertices: not whole triangles", out.len()));
    }
    Ok(out)
}

fn point<'a>(w: &mut impl Iterator<Item = &'a str>) -> Option<[f32; 3]> {
    let mut p = [0.0; 3];
    for x in &mut p {
        *x = w.next()?.parse().ok()?;
    }
    Some(p)
}

fn parse_obj(t: &str) -> Result<Triangles, String> {
    let mut verts: Vec<[f32; 3]> = Vec::new();
    let mut out = Vec::new();
    for (k, line) in t.lines().enumerate() {
        let bad = |what: &str| format!("line {}: {what}", k + 1);
        let mut w = line.split_whitespace();
        match w.next() {
            Some("v") => verts.push(point(&mut w).ok_or(bad("`v` needs 3 numbers"))?),
            Some("f") => {
                let mut idx = Vec::new();
                for c in w {
                    // `v`, `v/vt`, `v/vt/vn` or `v//vn`; negative counts from the end.
                    let i: i64 = c
                        .split('/')
                        .next()
                        .unwrap_or("")
                        .parse()
                        .map_err(|_| bad(&format!("`{c}` is not a vertex number")))?;
                    let n = verts.len() as i64;
                    let j = if i < 0 { n + i } else { i - 1 };
                    if !(0..n).contains(&j) {
                        return Err(bad(&format!("vertex {i} of {n} does not exist (yet)")));
                    }
                    idx.push(j as usize);
                }
                if idx.len() < 3 {
                    return Err(bad("a face needs 3 vertices or more"));
                }
                for t in 1..idx.len() - 1 {
                    out.extend([verts[idx[0]], verts[idx[t]], verts[idx[t + 1]]]);
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRI: [[f32; 3]; 3] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.5]];

    #[test]
    fn binary_and_ascii_stl_agree() {
        let mut b = vec![0u8; 80];
        b.extend(1u32.to_le_bytes());
        b.extend([0u8; 12]);
        for p in TRI {
            for x in p {
                b.extend(x.to_le_bytes());
            }
        }
        b.extend([0u8; 2]);
        assert_eq!(parse_mesh("a.STL", &b).unwrap(), TRI.to_vec());
        let ascii = "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n\
                     vertex 0 2 0.5\nendloop\nendfacet\nendsolid t\n";
        assert_eq!(parse_mesh("a.stl", ascii.as_bytes()).unwrap(), TRI.to_vec());
        // One byte short of the binary size and not text that begins with `solid`.
        assert!(parse_mesh("a.stl", &b[..b.len() - 1]).is_err());
    }

    #[test]
    fn obj_quads_become_two_triangles() {
        let obj = "# square\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1/1 2/2 3/3 -1\n";
        let t = parse_mesh("sq.obj", obj.as_bytes()).unwrap();
        assert_eq!(t.len(), 6);
        assert_eq!(t[3..], [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]]);
        let e = parse_mesh("sq.obj", b"v 0 0 0\nf 1 2 3\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("vertex 2 of 1"), "{e}");
        assert!(parse_mesh("sq.ply", b"").is_err());
        assert!(parse_mesh("e.obj", b"v 0 0 0\n")
            .unwrap_err()
            .contains("no triangles"));
    }
}
