//! The OpenCRG 1.x file: header blocks, channel definitions and the data records.
//!
//! Follows the OpenCRG user manual's file format chapter (blocks `$CT`, `$ROAD_CRG`,
//! `$ROAD_CRG_MODS`, `$ROAD_CRG_OPTS`, `$KD_DEFINITION`, the `$$$$` data start line;
//! the IPLOS formats `LRFI`, `LDFI`, `KRBI`, `KDBI`) and, where the manual is silent,
//! the reference C loader (`crgLoader.c`): keys match case-insensitively as line
//! prefixes, a line starting with `*` is a comment, `!` ends a value, a `$` line
//! closes a block, a field that is not a number is NaN except `**unused**` (0).

use crate::CrgError;

/// The `$ROAD_CRG` keys (absent keys keep the loader's defaults).
#[derive(Clone, Debug)]
pub(crate) struct Header {
    pub u_first: f64,
    pub u_last: Option<f64>,
    pub u_inc: f64,
    pub x_first: f64,
    pub y_first: f64,
    pub xy_last: Option<(f64, f64)>,
    pub phi_first: f64,
    pub phi_last: f64,
    pub z_first: Option<f64>,
    pub z_last: Option<f64>,
    pub bank_first: f64,
    pub bank_last: Option<f64>,
    pub slope_first: f64,
    pub v_right: f64,
    pub v_left: f64,
    pub v_inc: f64,
}

impl Default for Header {
    fn default() -> Self {
        Header {
            u_first: 0.0,
            u_last: None,
            u_inc: 0.01,
            x_first: 0.0,
            y_first: 0.0,
            xy_last: None,
            phi_first: 0.0,
            phi_last: 0.0,
            z_first: None,
            z_last: None,
            bank_first: 0.0,
            bank_last: None,
            slope_first: 0.0,
            v_right: 0.0,
            v_left: 0.0,
            v_inc: 0.01,
        }
    }
}

/// A `$ROAD_CRG_MODS` entry this crate applies (the rest are refused by name).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Mod {
    NanMode,
    NanOffset,
    RefPointU,
    RefPointUFrac,
    RefPointUOffset,
    RefPointV,
    RefPointVFrac,
    RefPointVOffset,
    RefPointX,
    RefPointY,
    RefPointZ,
    RefPointPhi,
    OffsetX,
    OffsetY,
    OffsetZ,
    OffsetPhi,
    RotCenterX,
    RotCenterY,
}

const MOD_KEYS: &[(&str, Option<Mod>)] = &[
    ("scale_z_grid", None),
    ("scale_slope", None),
    ("scale_banking", None),
    ("scale_length", None),
    ("scale_width", None),
    ("scale_curvature", None),
    ("grid_nan_mode", Some(Mod::NanMode)),
    ("grid_nan_offset", Some(Mod::NanOffset)),
    ("refline_rotcenter_x", Some(Mod::RotCenterX)),
    ("refline_rotcenter_y", Some(Mod::RotCenterY)),
    ("refline_offset_phi", Some(Mod::OffsetPhi)),
    ("refline_offset_x", Some(Mod::OffsetX)),
    ("refline_offset_y", Some(Mod::OffsetY)),
    ("refline_offset_z", Some(Mod::OffsetZ)),
    ("refpoint_u_fraction", Some(Mod::RefPointUFrac)),
    ("refpoint_u_offset", Some(Mod::RefPointUOffset)),
    ("refpoint_u", Some(Mod::RefPointU)),
    ("refpoint_v_fraction", Some(Mod::RefPointVFrac)),
    ("refpoint_v_offset", Some(Mod::RefPointVOffset)),
    ("refpoint_v", Some(Mod::RefPointV)),
    ("refpoint_x", Some(Mod::RefPointX)),
    ("refpoint_y", Some(Mod::RefPointY)),
    ("refpoint_z", Some(Mod::RefPointZ)),
    ("refpoint_phi", Some(Mod::RefPointPhi)),
];

/// `$ROAD_CRG_OPTS` keys that do not change z(x, y) (checks, warnings, logging).
const HARMLESS_OPTS: &[&str] = &["warn_", "log_", "check_"];

/// One column of a data record.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Col {
    /// A long section (elevation along u at one lateral position), by its order in
    /// the `D:` lines.
    Section(usize),
    Phi,
    Bank,
    Slope,
    Ignored,
}

/// A parsed file before the reference line and modifiers are computed.
#[derive(Clone, Debug)]
pub(crate) struct Raw {
    pub hdr: Header,
    /// Lateral positions of the long sections, ascending.
    pub v: Vec<f64>,
    /// True when the sections were given by index (`D:long section 1,m`): their
    /// positions are then LONG_SECTION_V_RIGHT + i · LONG_SECTION_V_INCREMENT.
    pub v_by_index: bool,
    /// Elevation, one vector per long section (as `v`), single precision as stored
    /// by the reference library.
    pub z: Vec<Vec<f32>>,
    pub phi: Option<Vec<f64>>,
    pub bank: Option<Vec<f64>>,
    pub slope: Option<Vec<f64>>,
    /// `None`: no `$ROAD_CRG_MODS` block (the standard's defaults apply); `Some`: the
    /// block's entries (an empty block switches the defaults off).
    pub mods: Option<Vec<(Mod, f64)>>,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Block {
    None,
    Comment,
    Road,
    Mods,
    Opts,
    Def,
}

#[derive(Clone, Copy)]
struct Format {
    ascii: bool,
    double: bool,
    long: bool,
}

impl Format {
    fn width(self) -> usize {
        match (self.ascii, self.double) {
            (true, false) => 10,
            (true, true) => 20,
            (false, false) => 4,
            (false, true) => 8,
        }
    }
}

fn starts_with_nocase(s: &str, p: &str) -> bool {
    s.len() >= p.len() && s.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
}

/// The position just after `token` in `hay` (case-insensitive, before a `!`).
fn find_token(hay: &str, token: &str) -> Option<usize> {
    let lead = hay.len() - hay.trim_start_matches(' ').len();
    let mut i = lead;
    while i < hay.len() && hay.as_bytes()[i] != b'!' {
        if hay.is_char_boundary(i) && starts_with_nocase(&hay[i..], token) {
            return Some(i + token.len());
        }
        i += 1;
    }
    None
}

/// C's `atof`: the longest numeric prefix after leading white space, else 0.
pub(crate) fn atof(s: &str) -> f64 {
    let s = s.trim_start();
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let s0 = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > s0
    };
    let mut any = digits(&mut i);
    if i < b.len() && b[i] == b'.' {
        i += 1;
        any |= digits(&mut i);
    }
    if !any {
        return 0.0;
    }
    let mantissa_end = i;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if digits(&mut j) {
            i = j;
        }
    }
    s[..i]
        .parse()
        .or_else(|_| s[..mantissa_end].parse())
        .unwrap_or(0.0)
}

fn value_after_eq(line: &str) -> Option<f64> {
    line.find('=').map(|p| atof(&line[p + 1..]))
}

struct Defs {
    cols: Vec<Col>,
    /// (position or index, order of definition) of each long section.
    sections: Vec<f64>,
    by_pos: bool,
    by_index: bool,
    format: Option<Format>,
}

fn road_key(hdr: &mut Header, line: &str, lineno: usize) -> Result<(), CrgError> {
    let keys: &[&str] = &[
        "reference_line_start_u",
        "reference_line_start_x",
        "reference_line_start_y",
        "reference_line_start_z",
        "reference_line_start_phi",
        "reference_line_start_b",
        "reference_line_start_s",
        "reference_line_end_u",
        "reference_line_end_x",
        "reference_line_end_y",
        "reference_line_end_z",
        "reference_line_end_phi",
        "reference_line_end_b",
        "reference_line_end_s",
        "reference_line_increment",
        "long_section_v_right",
        "long_section_v_left",
        "long_section_v_increment",
        "reference_line_offset_",
    ];
    let t = line.trim_start_matches(' ');
    let Some(key) = keys.iter().find(|k| starts_with_nocase(t, k)) else {
        return Ok(()); // unknown keys are ignored, as by the reference loader
    };
    let Some(v) = value_after_eq(t) else {
        return Err(CrgError::Format(lineno, format!("`{key}` without `=`")));
    };
    match key.strip_prefix("reference_line_").unwrap_or(key) {
        "start_u" => hdr.u_first = v,
        "start_x" => hdr.x_first = v,
        "start_y" => hdr.y_first = v,
        "start_z" => hdr.z_first = Some(v),
        "start_phi" => hdr.phi_first = v,
        "start_b" => hdr.bank_first = v,
        "start_s" => hdr.slope_first = v,
        "end_u" => hdr.u_last = Some(v),
        "end_x" => hdr.xy_last = Some((v, hdr.xy_last.map_or(f64::NAN, |p| p.1))),
        "end_y" => hdr.xy_last = Some((hdr.xy_last.map_or(f64::NAN, |p| p.0), v)),
        "end_z" => hdr.z_last = Some(v),
        "end_phi" => hdr.phi_last = v,
        "end_b" => hdr.bank_last = Some(v),
        "increment" => hdr.u_inc = v,
        "long_section_v_right" => hdr.v_right = v,
        "long_section_v_left" => hdr.v_left = v,
        "long_section_v_increment" => hdr.v_inc = v,
        _ => {} // end slope and reference line offsets: read but unused
    }
    Ok(())
}

fn mod_key(mods: &mut Vec<(Mod, f64)>, line: &str, lineno: usize) -> Result<(), CrgError> {
    let t = line.trim_start_matches(' ');
    let Some((key, m)) = MOD_KEYS.iter().find(|(k, _)| starts_with_nocase(t, k)) else {
        return Ok(());
    };
    let Some(m) = m else {
        return Err(CrgError::Unsupported(format!(
            "modifier `{key}` (line {lineno})"
        )));
    };
    let Some(v) = value_after_eq(t) else {
        return Err(CrgError::Format(lineno, format!("`{key}` without `=`")));
    };
    if *m == Mod::NanMode && ![0.0, 1.0, 2.0].contains(&v.trunc()) {
        return Err(CrgError::Format(
            lineno,
            "grid_nan_mode must be 0, 1 or 2".into(),
        ));
    }
    mods.retain(|(k, _)| k != m);
    mods.push((*m, v));
    Ok(())
}

fn def_line(defs: &mut Defs, line: &str, lineno: usize) -> Result<(), CrgError> {
    let t = line.trim_start_matches(' ');
    let bad = |what: &str| CrgError::Format(lineno, what.to_string());
    if starts_with_nocase(t, "#:") {
        let f: String = t[2..].chars().take(4).collect();
        defs.format = Some(Format {
            long: f.contains('L'),
            double: f.contains('D'),
            ascii: f.contains('F'),
        });
        return Ok(());
    }
    if !starts_with_nocase(t, "D:") {
        return Ok(()); // `U:` (the virtual u channel) and anything else: not a column
    }
    let rest = &t[2..];
    if let Some(p) = find_token(rest, "long section") {
        let mut rest = &rest[p..];
        if let Some(q) = find_token(rest, "at v ") {
            defs.by_pos = true;
            let e = find_token(&rest[q..], "=").ok_or_else(|| bad("`at v` without `=`"))?;
            rest = &rest[q + e..];
        } else {
            defs.by_index = true;
        }
        let pos = atof(rest);
        let c = find_token(rest, ",").ok_or_else(|| bad("long section without unit"))?;
        if !rest[c..].starts_with('m') {
            return Err(bad("a long section's unit must be m"));
        }
        defs.cols.push(Col::Section(defs.sections.len()));
        defs.sections.push(pos);
    } else if let Some(p) = find_token(rest, "reference line") {
        let rest = &rest[p..];
        let has = |tok: &str| find_token(rest, tok);
        let (col, unit) = if has("x").is_some() || has("y").is_some() || has("u").is_some() {
            return Err(CrgError::Unsupported(format!(
                "reference line x/y/u data channels (line {lineno}); give the heading `phi`"
            )));
        } else if has("phi").is_some() {
            (Col::Phi, "rad")
        } else if has("banking").is_some() {
            (Col::Bank, "m/m")
        } else if has("slope").is_some() {
            (Col::Slope, "m/m")
        } else {
            return Err(bad("unknown reference line channel"));
        };
        let c = find_token(rest, ",").ok_or_else(|| bad("channel without unit"))?;
        if find_token(&rest[c..], unit).is_none() {
            return Err(bad(&format!("this channel's unit must be {unit}")));
        }
        defs.cols.push(col);
    } else {
        defs.cols.push(Col::Ignored);
    }
    Ok(())
}

/// The header blocks of a file: road keys, channel definitions, modifiers (`None`: no
/// block), and the byte offset where the data starts.
type HeaderParts = (Header, Defs, Option<Vec<(Mod, f64)>>, usize);

/// Reads the header blocks up to the `$$$$` line.
fn header(bytes: &[u8]) -> Result<HeaderParts, CrgError> {
    let mut hdr = Header::default();
    let mut defs = Defs {
        cols: vec![],
        sections: vec![],
        by_pos: false,
        by_index: false,
        format: None,
    };
    let mut mods = None;
    let mut block = Block::None;
    let mut pos = 0;
    let mut lineno = 0;
    while pos < bytes.len() {
        let end = bytes[pos..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .map_or(bytes.len(), |e| pos + e);
        let mut next = end;
        while next < bytes.len() && (bytes[next] == b'\n' || bytes[next] == b'\r') {
            next += 1;
        }
        lineno += 1;
        let line = String::from_utf8_lossy(&bytes[pos..end]);
        let line: &str = &line;
        pos = next;
        if block == Block::Comment {
            if line.starts_with('$') {
                block = Block::None;
            }
            continue;
        }
        let t = line.trim_start_matches(' ');
        if t.is_empty() || t.starts_with('*') {
            continue;
        }
        if block != Block::None {
            if t.starts_with('$') {
                block = Block::None;
                continue;
            }
            match block {
                Block::Road => road_key(&mut hdr, line, lineno)?,
                Block::Mods => mod_key(mods.get_or_insert_with(Vec::new), line, lineno)?,
                Block::Opts => {
                    if !HARMLESS_OPTS.iter().any(|p| starts_with_nocase(t, p)) {
                        return Err(CrgError::Unsupported(format!(
                            "evaluation option `{}` (line {lineno}); the defaults apply",
                            t.split([' ', '=']).next().unwrap_or(t)
                        )));
                    }
                }
                Block::Def => def_line(&mut defs, line, lineno)?,
                Block::None | Block::Comment => unreachable!(),
            }
            continue;
        }
        let tags: &[(&str, Option<Block>)] = &[
            ("$ROAD_CRG_MODS", Some(Block::Mods)),
            ("$ROAD_CRG_OPTS", Some(Block::Opts)),
            ("$ROAD_CRG_FILE", None),
            ("$ROAD_CRG", Some(Block::Road)),
            ("$CT", Some(Block::Comment)),
            ("$KD_DEFINITION", Some(Block::Def)),
        ];
        if starts_with_nocase(t, "$$$$") {
            return Ok((hdr, defs, mods, pos));
        }
        match tags.iter().find(|(tag, _)| starts_with_nocase(t, tag)) {
            Some((_, Some(b))) => {
                if *b == Block::Mods {
                    mods = Some(Vec::new());
                }
                block = *b;
            }
            Some((_, None)) => {
                return Err(CrgError::Unsupported(format!(
                    "file references `$ROAD_CRG_FILE` (line {lineno})"
                )))
            }
            None => {} // `$` and other lines outside blocks
        }
    }
    Err(CrgError::Format(
        lineno,
        "no data section (a `$$$$` line)".into(),
    ))
}

fn ascii_field(f: &[u8]) -> f64 {
    let s = String::from_utf8_lossy(f);
    if s.bytes().all(|b| b"0123456789+-.eEdD ".contains(&b)) {
        atof(&s)
    } else if s == "**unused**" {
        0.0
    } else {
        f64::NAN
    }
}

/// The records of the data section, one `Vec<f64>` per record (NaN where missing).
fn records(data: &[u8], fmt: Format, n: usize, hdr: &Header) -> Result<Vec<Vec<f64>>, CrgError> {
    let w = fmt.width();
    let mut out = Vec::new();
    if !fmt.ascii {
        let Some(u_last) = hdr.u_last else {
            return Err(CrgError::Format(
                0,
                "binary data needs REFERENCE_LINE_END_U".into(),
            ));
        };
        let count = ((u_last - hdr.u_first) / hdr.u_inc + 0.5) as usize + 1;
        if count * n * w > data.len() {
            return Err(CrgError::Format(
                0,
                format!("binary data holds fewer than the {count} records the header says"),
            ));
        }
        for r in data.chunks_exact(n * w).take(count) {
            out.push(
                r.chunks_exact(w)
                    .map(|b| {
                        if fmt.double {
                            f64::from_be_bytes(b.try_into().unwrap())
                        } else {
                            f32::from_be_bytes(b.try_into().unwrap()) as f64
                        }
                    })
                    .collect(),
            );
        }
        return Ok(out);
    }
    if !fmt.long {
        return Err(CrgError::Unsupported(
            "compact text data formats (only LRFI, LDFI, KRBI, KDBI)".into(),
        ));
    }
    let lines_per_record = (n * w).div_ceil(80);
    let mut lines = data
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty());
    'records: loop {
        let mut text = Vec::new();
        for k in 0..lines_per_record {
            match lines.next() {
                Some(l) => {
                    if k > 0 {
                        text.push(b'\n');
                    }
                    text.extend_from_slice(l);
                }
                None => break 'records,
            }
        }
        let mut rec = Vec::with_capacity(n);
        let mut p = 0;
        for _ in 0..n {
            while p < text.len() && text[p] == b'\n' {
                p += 1;
            }
            if p + w > text.len() {
                break 'records; // a short record ends the data, as in the reference loader
            }
            rec.push(ascii_field(&text[p..p + w]));
            p += w;
        }
        out.push(rec);
    }
    Ok(out)
}

pub(crate) fn parse(bytes: &[u8]) -> Result<Raw, CrgError> {
    let (hdr, defs, mods, data_at) = header(bytes)?;
    let fmt = defs
        .format
        .ok_or_else(|| CrgError::Format(0, "no data format line `#:` in $KD_DEFINITION".into()))?;
    let nsec = defs.sections.len();
    if nsec < 2 {
        return Err(CrgError::Format(0, "fewer than two long sections".into()));
    }
    if defs.by_pos && defs.by_index {
        return Err(CrgError::Format(
            0,
            "long sections given both by position and by index".into(),
        ));
    }
    // Sort the sections by position (by index: they must be 1, 2, …, n).
    let mut order: Vec<usize> = (0..nsec).collect();
    order.sort_by(|&a, &b| defs.sections[a].total_cmp(&defs.sections[b]));
    let mut v: Vec<f64> = order.iter().map(|&i| defs.sections[i]).collect();
    if defs.by_index {
        if v.iter().enumerate().any(|(i, &p)| p != (i + 1) as f64) {
            return Err(CrgError::Format(
                0,
                "long sections by index must be numbered 1, 2, …".into(),
            ));
        }
        // The default lateral positions: from the right border in constant steps.
        for (i, p) in v.iter_mut().enumerate() {
            *p = hdr.v_right + i as f64 * hdr.v_inc;
        }
    }
    if v.windows(2).any(|p| p[1] - p[0] < 1e-6) {
        return Err(CrgError::Format(
            0,
            "long sections closer than 1e-6 m".into(),
        ));
    }
    if hdr.u_inc.is_nan() || hdr.u_inc <= 0.0 {
        return Err(CrgError::Format(
            0,
            "REFERENCE_LINE_INCREMENT must be positive".into(),
        ));
    }
    let recs = records(&bytes[data_at..], fmt, defs.cols.len(), &hdr)?;
    if recs.len() < 2 {
        return Err(CrgError::Format(0, "fewer than two data records".into()));
    }
    let mut rank = vec![0; nsec];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    let mut z = vec![Vec::with_capacity(recs.len()); nsec];
    let has = |c: Col| defs.cols.contains(&c);
    let mut phi = has(Col::Phi).then(Vec::new);
    let mut bank = has(Col::Bank).then(Vec::new);
    let mut slope = has(Col::Slope).then(Vec::new);
    for (k, rec) in recs.iter().enumerate() {
        for (c, &val) in defs.cols.iter().zip(rec) {
            match c {
                Col::Section(i) => z[rank[*i]].push(val as f32),
                // The first heading is the header's REFERENCE_LINE_START_PHI.
                Col::Phi => phi
                    .as_mut()
                    .unwrap()
                    .push(if k == 0 { hdr.phi_first } else { val }),
                Col::Bank => bank.as_mut().unwrap().push(val),
                Col::Slope => slope.as_mut().unwrap().push(val),
                Col::Ignored => {}
            }
        }
    }
    Ok(Raw {
        hdr,
        v,
        v_by_index: defs.by_index,
        z,
        phi,
        bank,
        slope,
        mods,
    })
}
