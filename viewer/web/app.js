// The page of `fdc view`: places every body from its R and theta result columns, plays
// the result back and plots chosen channels with a cursor at the current time. It
// knows nothing of the model beyond the scene (the shapes of each body) the server sends.
// Query options: bare=1 (scene only), view=top (orthographic from +z), flat=1 (unlit
// colours), t=T (paused at T), glyphs=1 and arrows=1 (the Show boxes checked), mode=N
// (mode N of the list animated), bodies=0 (bodies hidden: the road under them shows).
// Tests read window.fdcView.

const embedded = window.FDC_EMBED;
const threeUrl = embedded
  ? URL.createObjectURL(new Blob([document.getElementById('three-src').textContent],
                                 { type: 'text/javascript' }))
  : '/vendor/three.module.min.js';
const THREE = await import(threeUrl);

const opts = new URLSearchParams(location.search);
if (opts.get('bare')) document.body.classList.add('bare');
const $ = (id) => document.getElementById(id);
const PALETTE = [0xd62728, 0x1f77b4, 0x2ca02c, 0xff7f0e, 0x9467bd, 0x8c564b, 0xe377c2,
                 0x17becf, 0xbcbd22, 0x7f7f7f];

// ---- scene --------------------------------------------------------------------------
const host = $('scene');
const renderer = new THREE.WebGLRenderer({ antialias: !opts.get('flat'),
                                           preserveDrawingBuffer: true });
renderer.setPixelRatio(1);
host.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0xffffff);
scene.add(new THREE.HemisphereLight(0xffffff, 0x666666, 2.0));
const sun = new THREE.DirectionalLight(0xffffff, 1.5);
sun.position.set(1, -2, 3);
scene.add(sun);
const top = opts.get('view') === 'top';
let camera = top ? new THREE.OrthographicCamera(-1, 1, 1, -1, -100, 100)
                 : new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
// Top view: screen right is +x, screen up is +y; otherwise +z is up.
if (top) camera.up.set(0, 1, 0); else camera.up.set(0, 0, 1);
const orbit = { target: new THREE.Vector3(), dist: 1, az: -1.2, el: 0.5, half: 1 };
let grid = null;
let bodies = [];       // { name, mesh, axes, cols: [Rx,Ry,Rz,qw,qx,qy,qz] }
let sceneData = null;

function placeCamera() {
  const w = host.clientWidth || 1, h = host.clientHeight || 1;
  renderer.setSize(w, h);
  if (top) {
    const a = w / h, s = orbit.half;
    Object.assign(camera, { left: -s * a, right: s * a, top: s, bottom: -s });
    camera.position.set(orbit.target.x, orbit.target.y, orbit.target.z + 10);
    camera.lookAt(orbit.target);
  } else {
    camera.aspect = w / h;
    const c = Math.cos(orbit.el);
    camera.position.set(orbit.target.x + orbit.dist * c * Math.cos(orbit.az),
                        orbit.target.y + orbit.dist * c * Math.sin(orbit.az),
                        orbit.target.z + orbit.dist * Math.sin(orbit.el));
    camera.lookAt(orbit.target);
  }
  camera.updateProjectionMatrix();
}

// Orbit camera: drag turns, shift-drag pans, the wheel zooms.
let drag = null;
renderer.domElement.addEventListener('pointerdown', (e) => { drag = { x: e.clientX, y: e.clientY, pan: e.shiftKey }; });
window.addEventListener('pointerup', () => { drag = null; });
window.addEventListener('pointermove', (e) => {
  if (!drag) return;
  const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
  drag.x = e.clientX; drag.y = e.clientY;
  if (drag.pan) {
    const right = new THREE.Vector3().setFromMatrixColumn(camera.matrix, 0);
    const up = new THREE.Vector3().setFromMatrixColumn(camera.matrix, 1);
    const k = (top ? orbit.half : orbit.dist) * 0.002;
    orbit.target.addScaledVector(right, -dx * k).addScaledVector(up, dy * k);
  } else if (!top) {
    orbit.az -= dx * 0.01;
    orbit.el = Math.max(-1.5, Math.min(1.5, orbit.el + dy * 0.01));
  }
  placeCamera(); draw();
});
renderer.domElement.addEventListener('wheel', (e) => {
  const k = Math.exp(e.deltaY * 0.001);
  orbit.dist *= k; orbit.half *= k;
  placeCamera(); draw(); e.preventDefault();
}, { passive: false });
window.addEventListener('resize', () => { placeCamera(); draw(); });

// Double-sided: a mesh file's triangles may wind either way.
function material(colour, opacity = 1) {
  const o = { color: colour, transparent: opacity < 1, opacity, side: THREE.DoubleSide };
  return opts.get('flat') ? new THREE.MeshBasicMaterial(o)
                          : new THREE.MeshStandardMaterial({ ...o, roughness: 0.6 });
}

// The geometry of a declared shape (docs/language.md, `shape`); cylinders and
// capsules lie along z (three.js builds them along y).
function geometry(s) {
  let g;
  if (s.kind === 'box') g = new THREE.BoxGeometry(...s.size);
  else if (s.kind === 'sphere') g = new THREE.SphereGeometry(s.radius, 32, 16);
  else if (s.kind === 'cylinder') g = new THREE.CylinderGeometry(s.radius, s.radius, s.length, 32).rotateX(Math.PI / 2);
  else if (s.kind === 'capsule') g = new THREE.CapsuleGeometry(s.radius, s.length, 8, 32).rotateX(Math.PI / 2);
  else {
    g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(meshArrays[s.mesh], 3));
    g.scale(s.scale, s.scale, s.scale);
    g.computeVertexNormals();
  }
  g.computeBoundingSphere();
  return g;
}

// The meshes of one body (or of the fixed shapes) in a group placed at the body frame;
// a body without declared shapes shows the box of its inertia. `radius`: how far the
// shapes reach from the frame's origin (for the camera).
function shapeGroup(shapes, colour) {
  const group = new THREE.Group();
  let radius = 0;
  for (const s of shapes) {
    const g = geometry(s);
    const mesh = new THREE.Mesh(g, material(s.colour ?? colour, s.opacity));
    mesh.position.set(...s.at);
    const [w, x, y, z] = s.orientation;
    mesh.quaternion.set(x, y, z, w);
    group.add(mesh);
    radius = Math.max(radius, mesh.position.length() + g.boundingSphere.radius);
  }
  return { group, radius };
}

const BOX = (size) => ({ kind: 'box', size, colour: null, opacity: 1, at: [0, 0, 0], orientation: [1, 0, 0, 0] });

// The vertices of the scene's mesh files (each once, however many shapes show it):
// raw f32 from the server, base64 inside an export.
let meshArrays = [];
async function fetchMeshes(data, version) {
  if (embedded) {
    const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
    return (embedded.mesh_data || []).map((b) => new Float32Array(bytes(b)));
  }
  return Promise.all((data.meshes || []).map(async (_, k) =>
    new Float32Array(await (await fetch(`/api/mesh/${k}?v=${version}`)).arrayBuffer())));
}

// New meshes for a new scene; the columns of a body come from the run shown.
let fixed = null;
function buildScene(data) {
  for (const b of bodies) scene.remove(b.mesh);
  if (fixed) scene.remove(fixed);
  sceneData = data;
  bodies = data.bodies.map((b, i) => {
    const colour = PALETTE[i % PALETTE.length];
    const { group, radius } = shapeGroup(b.shapes.length ? b.shapes : [BOX(b.size)], colour);
    const axes = new THREE.AxesHelper(radius * 0.8);
    axes.visible = $('frames').checked;
    group.add(axes);
    scene.add(group);
    return { name: b.name, radius, mesh: group, axes, colour };
  });
  fixed = shapeGroup(data.fixed || [], 0x888888).group;
  scene.add(fixed);
  buildGlyphs(data.glyphs || []);
  buildParams(data.params);
}

// ---- glyphs: joint markers, spring lines, force arrows -------------------------------
const GLYPH = 0x222222, ARROW = 0xff00ff;
let glyphs = [];   // { kind, name, ends: [{ group, at: Vector3 }], line, arrow }
let glyphRoot = null;
function groupOf(body) {
  const b = bodies.find((x) => x.name === body);
  return b ? b.mesh : fixed;
}
function buildGlyphs(list) {
  if (glyphRoot) scene.remove(glyphRoot);
  glyphRoot = new THREE.Group();
  freeArrows = new Map();
  scene.add(glyphRoot);
  // Markers a fifth of the smallest body's reach: visible, never hiding a body.
  const size = 0.2 * Math.min(...bodies.map((b) => b.radius), 1);
  // Drawn over the bodies: a joint sits inside the bodies it joins.
  const mat = new THREE.MeshBasicMaterial({ color: GLYPH, depthTest: false });
  const lineMat = new THREE.LineBasicMaterial({ color: GLYPH, depthTest: false });
  glyphs = list.map((g) => {
    const ends = g.ends.map((e) => ({ group: groupOf(e.body), at: new THREE.Vector3(...e.at) }));
    const out = { kind: g.kind, name: g.name, ends, parts: [] };
    if (g.kind === 'tyre') {
      // At the contact point NAME.contact.* where the run has it (placeGlyphs), else
      // at the wheel centre.
      out.dot = new THREE.Mesh(new THREE.SphereGeometry(size / 2, 16, 8), mat);
      out.parts.push(out.dot);
      glyphRoot.add(out.dot);
    } else if (g.kind === 'point') {
      // A force at a point: a marker on the first body, a line to the same point of
      // the second (a bushing's deflection).
      const dot = new THREE.Mesh(new THREE.SphereGeometry(size / 2, 16, 8), mat);
      dot.position.copy(ends[0].at);
      ends[0].group.add(dot);
      out.parts.push(dot);
      if (ends.length === 2) {
        out.line = new THREE.Line(new THREE.BufferGeometry().setFromPoints([ends[0].at, ends[1].at]), lineMat);
        glyphRoot.add(out.line);
        out.parts.push(out.line);
      }
      out.force = g.force && new THREE.Vector3(...g.force);
    } else if (g.kind === 'joint') {
      const dot = new THREE.Mesh(new THREE.SphereGeometry(size / 2, 16, 8), mat);
      dot.position.copy(ends[0].at);
      out.parts.push(dot);
      if (g.axis) {
        const a = new THREE.Vector3(...g.axis).normalize().multiplyScalar(1.5 * size);
        const pts = [ends[0].at.clone().sub(a), ends[0].at.clone().add(a)];
        out.parts.push(new THREE.Line(new THREE.BufferGeometry().setFromPoints(pts), lineMat));
      }
      for (const p of out.parts) ends[0].group.add(p);
    } else {
      out.line = new THREE.Line(new THREE.BufferGeometry().setFromPoints([ends[0].at, ends[1].at]), lineMat);
      glyphRoot.add(out.line);
      out.parts.push(out.line);
    }
    out.arrow = new THREE.ArrowHelper(new THREE.Vector3(1, 0, 0), new THREE.Vector3(), 1, ARROW);
    out.arrow.visible = false;
    glyphRoot.add(out.arrow);
    return out;
  });
  for (const g of glyphs) for (const p of [...g.parts, g.arrow]) p.renderOrder = 1;
  showGlyphs();
}
function showGlyphs() {
  for (const g of glyphs) for (const p of g.parts) p.visible = $('glyphs').checked;
}
// Springs follow both bodies; a force arrow at a spring's first end shows its tension
// (the result channel NAME.tension) along the spring, the largest of the run as long
// as the view is wide / 4.
function peakOf(run, i) {
  run.peaks = run.peaks || {};
  const key = `${i}:${run.rows.length}`;
  if (!(key in run.peaks)) run.peaks[key] = run.rows.reduce((m, r) => Math.max(m, Math.abs(r[i])), 1e-300);
  return run.peaks[key];
}
// Loads: a run of the server has, per force element, the global force on its first
// body (channels NAME.load.*, the element's own force vector; `run.loads` names the
// body). The largest of the run over all elements is a quarter of the view.
const loadColumns = (run, name) => {
  const c = run ? ['x', 'y', 'z'].map((k) => run.channels.indexOf(`${name}.load.${k}`)) : [-1];
  return c.every((i) => i >= 0) ? c : null;
};
function loadPeak(run) {
  run.peaks = run.peaks || {};
  const key = `loads:${run.rows.length}`;
  if (!(key in run.peaks)) {
    const cols = (run.loads || []).map((l) => loadColumns(run, l.name)).filter((c) => c);
    let m = 1e-300;
    for (const r of run.rows) for (const c of cols) m = Math.max(m, Math.hypot(...c.map((i) => r[i])));
    run.peaks[key] = m;
  }
  return run.peaks[key];
}
// An arrow at `at` along `f`, `peak` as long as a quarter of the view; hidden for none.
function pointArrow(arrow, at, f, peak) {
  arrow.visible = $('arrows').checked && !!f && f.length() > 0;
  if (!arrow.visible) return;
  arrow.position.copy(at);
  arrow.setDirection(f.clone().normalize());
  arrow.setLength(f.length() / peak * orbit.half * 0.5);
}
// The load of element `name` in `row` and its scale; without load channels (a result
// file) a constant force's `value`, the largest constant force a quarter of the view.
function loadOf(g, row) {
  const c = loadColumns(shown, g.name);
  if (c) return [row && new THREE.Vector3(...c.map((i) => row[i])), loadPeak(shown)];
  const peak = Math.max(...glyphs.filter((x) => x.force).map((x) => x.force.length()));
  return [g.force, peak];
}
// Arrows of loads without a glyph (a force with no point `at`): at the body's origin.
let freeArrows = new Map();
function placeFreeArrows(row) {
  const named = new Set(glyphs.map((g) => g.name));
  for (const a of freeArrows.values()) a.visible = false;
  for (const l of (shown && shown.loads) || []) {
    if (named.has(l.name)) continue;
    if (!freeArrows.has(l.name)) {
      const a = new THREE.ArrowHelper(new THREE.Vector3(1, 0, 0), new THREE.Vector3(), 1, ARROW);
      a.renderOrder = 1;
      glyphRoot.add(a);
      freeArrows.set(l.name, a);
    }
    const [f, peak] = loadOf({ name: l.name }, row);
    pointArrow(freeArrows.get(l.name), groupOf(l.body).localToWorld(new THREE.Vector3()), f, peak);
  }
}
function placeGlyphs(row) {
  const world = (e) => e.group.localToWorld(e.at.clone());
  placeFreeArrows(row);
  for (const g of glyphs) {
    if (g.kind === 'tyre') {
      const c = shown ? ['x', 'y', 'z'].map((k) => shown.channels.indexOf(`${g.name}.contact.${k}`)) : [-1];
      if (row && c.every((i) => i >= 0)) g.dot.position.set(...c.map((i) => row[i]));
      else g.dot.position.copy(world(g.ends[0]));
      // The tyre's force at its contact point.
      pointArrow(g.arrow, g.dot.position, ...loadOf(g, row));
      continue;
    }
    if (g.kind === 'point') {
      if (g.line) g.line.geometry.setFromPoints(g.ends.map(world));
      // A bushing's, a constant force's or another force's load at its point.
      pointArrow(g.arrow, world(g.ends[0]), ...loadOf(g, row));
      continue;
    }
    if (g.kind !== 'spring') continue;
    const [a, b] = g.ends.map(world);
    g.line.geometry.setFromPoints([a, b]);
    const i = shown ? shown.channels.indexOf(`${g.name}.tension`) : -1;
    g.arrow.visible = $('arrows').checked && i >= 0 && !!row;
    if (!g.arrow.visible) continue;
    const peak = peakOf(shown, i);
    const dir = b.clone().sub(a).normalize().multiplyScalar(Math.sign(row[i]) || 1);
    g.arrow.position.copy(a);
    g.arrow.setDirection(dir);
    g.arrow.setLength(Math.max(1e-6, Math.abs(row[i]) / peak * orbit.half * 0.5));
  }
}

// ---- runs ---------------------------------------------------------------------------
const runs = new Map();   // id -> { id, set, channels, times, rows, done, error }
let shown = null;         // the run on the screen (the newest)

// The columns of a body's pose: R, and θ where the body has one (a point mass has
// none: it keeps the identity orientation, index -1).
function columns(run, name) {
  const want = ['R.x', 'R.y', 'R.z', 'theta.w', 'theta.x', 'theta.y', 'theta.z'];
  const idx = want.map((w) => run.channels.indexOf(`${name}.${w}`));
  if (idx.slice(0, 3).some((i) => i < 0)) return null;
  return idx.slice(3).some((i) => i < 0) ? [...idx.slice(0, 3), -1, -1, -1, -1] : idx;
}

// Extent of the run: the camera frames every place a body goes.
function frame(run) {
  const box = new THREE.Box3();
  for (const b of bodies) {
    const c = columns(run, b.name);
    if (!c) continue;
    const r = b.radius;
    for (const row of run.rows) {
      box.expandByPoint(new THREE.Vector3(row[c[0]] - r, row[c[1]] - r, row[c[2]] - r));
      box.expandByPoint(new THREE.Vector3(row[c[0]] + r, row[c[1]] + r, row[c[2]] + r));
    }
  }
  if (box.isEmpty()) return;
  const size = box.getSize(new THREE.Vector3());
  box.getCenter(orbit.target);
  const span = Math.max(size.x, size.y, size.z, 1e-3);
  orbit.half = 0.6 * Math.max(size.x / (host.clientWidth / host.clientHeight || 1), size.y, 1e-3);
  orbit.dist = 2.2 * span;
  if (grid) scene.remove(grid);
  grid = new THREE.GridHelper(4 * span, 20, 0x999999, 0xdddddd);
  grid.rotation.x = Math.PI / 2;
  grid.position.set(orbit.target.x, orbit.target.y, box.min.z - 0.01 * span);
  grid.visible = $('grid').checked && !top;
  scene.add(grid);
  buildRoads(box, span);
  placeCamera();
}

// ---- the road surface: data roads as sampled by the server, analytic roads here ------
// Coloured by height from ROAD_LO (lowest) to ROAD_HI (highest point of all roads
// shown), linear in the displayed (sRGB) colour.
const ROAD_LO = [40, 60, 200], ROAD_HI = [230, 200, 40];
let roadRoot = null, roadRange = null;
// h(x, y) of stdlib/roads.fd `road_height` (that file is the formula's home; the
// browser test checks this surface against the tyre's `road_height` output).
function roadHeight(r, x, y) {
  const waves = ([a, f, p], s) => a.reduce((sum, ai, i) => sum + ai * Math.sin(2 * Math.PI * f[i] * s + p[i]), 0);
  return r.plane[0] + r.plane[1] * x + r.plane[2] * y + waves(r.x, x) + waves(r.y, y);
}
// The analytic roads of the tyres (one per distinct road), over the run's extent with
// a margin, at about 12 points per shortest wavelength (at most 4000 along an axis).
function analyticGrids(box, span) {
  const seen = new Set(), out = [];
  const hasData = (sceneData.roads || []).length > 0;
  for (const g of sceneData.glyphs || []) {
    if (!g.road) continue;
    const key = JSON.stringify(g.road);
    const flat = g.road.plane.every((v) => v === 0) && [...g.road.x[0], ...g.road.y[0]].every((v) => v === 0);
    if (seen.has(key) || (flat && hasData)) continue;
    seen.add(key);
    const m = 0.25 * span + 0.5;
    const [x0, x1, y0, y1] = [box.min.x - m, box.max.x + m, box.min.y - m, box.max.y + m];
    const count = (len, f) => Math.max(2, Math.min(4000, Math.max(
      Math.ceil(len * 12 * Math.max(0, ...f.map(Math.abs))), Math.ceil(len / span * 40)) + 1));
    const nu = count(x1 - x0, g.road.x[1]), nv = count(y1 - y0, g.road.y[1]);
    const points = [];
    for (let i = 0; i < nu; i++) for (let j = 0; j < nv; j++) {
      const x = x0 + (x1 - x0) * i / (nu - 1), y = y0 + (y1 - y0) * j / (nv - 1);
      points.push(x, y, roadHeight(g.road, x, y));
    }
    out.push({ nu, nv, points });
  }
  return out;
}
function buildRoads(box, span) {
  if (roadRoot) scene.remove(roadRoot);
  roadRoot = new THREE.Group();
  const grids = [...(sceneData.roads || []), ...analyticGrids(box, span)];
  let lo = Infinity, hi = -Infinity;
  for (const g of grids) for (let k = 2; k < g.points.length; k += 3) { lo = Math.min(lo, g.points[k]); hi = Math.max(hi, g.points[k]); }
  roadRange = grids.length ? { zmin: lo, zmax: hi, lo: ROAD_LO, hi: ROAD_HI } : null;
  const colour = new THREE.Color();
  for (const g of grids) {
    const geo = new THREE.BufferGeometry();
    geo.setAttribute('position', new THREE.BufferAttribute(new Float32Array(g.points), 3));
    const cols = new Float32Array(g.points.length);
    for (let k = 0; k < g.points.length; k += 3) {
      const s = hi > lo ? (g.points[k + 2] - lo) / (hi - lo) : 0.5;
      const c = ROAD_LO.map((a, i) => (a + s * (ROAD_HI[i] - a)) / 255);
      colour.setRGB(c[0], c[1], c[2], THREE.SRGBColorSpace);
      cols.set([colour.r, colour.g, colour.b], k);
    }
    geo.setAttribute('color', new THREE.BufferAttribute(cols, 3));
    const idx = [];
    for (let i = 0; i + 1 < g.nu; i++) for (let j = 0; j + 1 < g.nv; j++) {
      const a = i * g.nv + j, b = a + g.nv;
      idx.push(a, b, a + 1, a + 1, b, b + 1);
    }
    geo.setIndex(idx);
    geo.computeVertexNormals();
    const o = { vertexColors: true, side: THREE.DoubleSide };
    roadRoot.add(new THREE.Mesh(geo, opts.get('flat') ? new THREE.MeshBasicMaterial(o)
                                                      : new THREE.MeshStandardMaterial({ ...o, roughness: 0.9 })));
  }
  roadRoot.visible = $('road').checked;
  scene.add(roadRoot);
}

// The row values at time t: linear between rows (quaternions renormalized).
function sample(run, t) {
  const T = run.times;
  if (!T.length) return null;
  let hi = T.findIndex((x) => x >= t);
  if (hi < 0) return run.rows[T.length - 1];
  if (hi === 0) return run.rows[0];
  const lo = hi - 1, s = (t - T[lo]) / (T[hi] - T[lo] || 1);
  return run.rows[lo].map((v, i) => v + s * (run.rows[hi][i] - v));
}

let time = 0;
function draw() {
  if (shown) {
    const mode = chosenMode();
    const row = mode ? shown.rows[0] : sample(shown, time);
    for (const b of bodies) {
      const c = columns(shown, b.name);
      b.mesh.visible = !!(c && row);
      if (!c || !row) continue;
      b.mesh.position.set(row[c[0]], row[c[1]], row[c[2]]);
      if (c[3] < 0) b.mesh.quaternion.identity();
      else b.mesh.quaternion.set(row[c[4]], row[c[5]], row[c[6]], row[c[3]]).normalize();
      if (mode) displace(b, mode);
      b.mesh.visible = $('bodies').checked;
    }
    scene.updateMatrixWorld();
    placeGlyphs(mode ? null : row);
  }
  renderer.render(scene, camera);
  $('clock').textContent = `t = ${time.toFixed(3)} s`;
  $('time').value = time;
  plotCursor();
}

// ---- modes: the list of `fdc modes` and the animation of one ------------------------
// A mode is drawn about the first row of the run shown (the state it was linearized
// about when that run has the model's values): R = R0 + a Re(t e^{iφ}) and
// A = A0 exp(a Re(r e^{iφ})~) (rotation vector r in body axes, on the group), φ = 2π
// per MODE_PERIOD of playback. a: the largest body displacement |t| + |r| · reach is
// MODE_REACH of the view's half height, times the amplitude slider.
const MODE_PERIOD = 1, MODE_REACH = 0.25;
let modes = null, buildModes = null;   // the server's `modes` (fdc modes --json), or { error }
function modeLabel(m, i) {
  const f = m.kind === 'rigid_body' ? 'rigid body' : `${m.frequency_hz.toPrecision(4)} Hz`;
  const z = m.damping_ratio == null ? '' : ` ζ ${m.damping_ratio.toFixed(3)}`;
  const who = m.energy.filter((e) => e.share >= 0.05).slice(0, 3)
    .map((e) => `${e.body} ${Math.round(100 * e.share)}%`).join(', ');
  return `${i + 1}: ${f}${z} — ${who}`;
}
function listModes(m) {
  modes = m;
  const sel = $('mode'), keep = sel.value || opts.get('mode') || '';
  sel.innerHTML = '';
  sel.add(new Option('(the run)', ''));
  for (const [i, x] of (m && m.modes ? m.modes : []).entries()) sel.add(new Option(modeLabel(x, i), `${i + 1}`));
  sel.value = [...sel.options].some((o) => o.value === keep) ? keep : '';
  $('modeinfo').textContent = !m ? '' : m.error ? `no modes: ${m.error}`
    : `at t = ${m.t} s: ${m.free_dofs} degrees of freedom, ${m.modes.length} modes`;
}
function chosenMode() {
  const k = parseInt($('mode').value, 10);
  return modes && modes.modes && k > 0 ? modes.modes[k - 1] : null;
}
function modeAmplitude(mode) {
  let peak = 0;
  for (const s of mode.shape) {
    const b = bodies.find((x) => x.name === s.body);
    const len = (v, w) => Math.hypot(...v, ...w);
    peak = Math.max(peak, len(s.translation, s.translation_im) + len(s.rotation, s.rotation_im) * (b ? b.radius : 0));
  }
  return peak > 0 ? MODE_REACH * orbit.half / peak * parseFloat($('modeamp').value) : 0;
}
function displace(b, mode) {
  const s = mode.shape.find((x) => x.body === b.name);
  if (!s) return;
  const phi = 2 * Math.PI * time / MODE_PERIOD, a = modeAmplitude(mode);
  const at = (re, im) => re.map((v, i) => a * (v * Math.cos(phi) - im[i] * Math.sin(phi)));
  const t = at(s.translation, s.translation_im), r = new THREE.Vector3(...at(s.rotation, s.rotation_im));
  b.mesh.position.add(new THREE.Vector3(...t));
  const angle = r.length();
  if (angle > 0) b.mesh.quaternion.multiply(new THREE.Quaternion().setFromAxisAngle(r.normalize(), angle));
}
$('mode').onchange = () => draw();
$('modeamp').oninput = () => draw();

// ---- playback -----------------------------------------------------------------------
let playing = !opts.has('t');
if (opts.has('t')) time = parseFloat(opts.get('t'));
let last = null;
$('play').textContent = playing ? 'pause' : 'play';
$('play').onclick = () => { playing = !playing; $('play').textContent = playing ? 'pause' : 'play'; };
$('time').oninput = (e) => { time = parseFloat(e.target.value); playing = false; $('play').textContent = 'play'; draw(); };
$('frames').onchange = () => { for (const b of bodies) b.axes.visible = $('frames').checked; draw(); };
$('grid').onchange = () => { if (grid) grid.visible = $('grid').checked && !top; draw(); };
if (opts.get('bodies') === '0') $('bodies').checked = false;
$('bodies').onchange = () => draw();
$('road').onchange = () => { if (roadRoot) roadRoot.visible = $('road').checked; draw(); };
for (const k of ['glyphs', 'arrows']) if (opts.get(k)) $(k).checked = true;
$('glyphs').onchange = () => { showGlyphs(); draw(); };
$('arrows').onchange = () => draw();
function tick(now) {
  if (playing && shown && shown.times.length && last !== null) {
    const end = shown.times[shown.times.length - 1];
    time += (now - last) / 1000 * parseFloat($('speed').value);
    if (time > end) time = $('loop').checked ? 0 : end;
    draw();
  }
  last = now;
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);

// ---- plots --------------------------------------------------------------------------
let plot = null;
function chosen() { return [...$('channels').selectedOptions].map((o) => o.value); }
function fillChannels(run) {
  const sel = $('channels');
  if (sel.options.length === run.channels.length) return;
  sel.innerHTML = '';
  for (const c of run.channels) sel.add(new Option(c, c));
  const pick = run.channels.find((c) => !c.includes('.')) || run.channels[0];
  if (pick) sel.value = pick;
}
$('channels').onchange = () => rebuildPlot();
function rebuildPlot() {
  if (plot) { plot.destroy(); plot = null; }
  const names = chosen(), all = [...runs.values()].filter((r) => r.times.length);
  if (!names.length || !all.length) return;
  // One x axis: the newest run's times; older runs are sampled onto it.
  const base = all[all.length - 1];
  const data = [base.times], series = [{}];
  all.forEach((r, k) => names.forEach((n, j) => {
    const i = r.channels.indexOf(n);
    if (i < 0) return;
    data.push(base.times.map((t) => { const row = sample(r, t); return row ? row[i] : null; }));
    const label = `${n} (${r.set.length ? r.set.map(([a, v]) => `${a}=${v}`).join(' ') : 'model'})`;
    series.push({ label, stroke: `#${PALETTE[j % PALETTE.length].toString(16).padStart(6, '0')}`,
                  width: k === all.length - 1 ? 2 : 1, dash: k === all.length - 1 ? undefined : [4, 3] });
  }));
  plot = new uPlot({ width: 340, height: 220, series, scales: { x: { time: false } },
                     hooks: { draw: [drawCursor] } }, data, $('plot'));
}
function drawCursor(u) {
  const x = u.valToPos(time, 'x', true), ctx = u.ctx;
  ctx.save(); ctx.strokeStyle = '#000'; ctx.beginPath();
  ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke(); ctx.restore();
}
let cursorPending = false;
function plotCursor() {
  if (!plot || cursorPending) return;
  cursorPending = true;
  setTimeout(() => { cursorPending = false; if (plot) plot.redraw(false, false); }, 100);
}

// ---- parameters and runs ------------------------------------------------------------
function buildParams(params) {
  const box = $('params');
  box.innerHTML = '';
  for (const p of params) {
    const l = document.createElement('label');
    l.textContent = p.name;
    const input = document.createElement('input');
    Object.assign(input, { type: 'number', step: 'any', value: p.value, name: p.name });
    input.dataset.initial = p.value;
    l.appendChild(input);
    box.appendChild(l);
  }
  $('rerun').disabled = !!embedded;
}
$('rerun').onclick = () => {
  const set = [...$('params').querySelectorAll('input')]
    .filter((i) => i.value !== i.dataset.initial).map((i) => `${i.name}=${i.value}`);
  fetch('/api/rerun', { method: 'POST', body: set.join('\n') });
};
function listRuns() {
  $('runs').innerHTML = [...runs.values()].map((r) => {
    const what = r.set.length ? r.set.map(([a, v]) => `${a}=${v}`).join(' ') : 'model values';
    const state = r.error ? `failed: ${r.error}` : r.done ? `${r.times.length} rows` : `running (${r.times.length} rows)`;
    return `<div>#${r.id} ${what} — ${state}</div>`;
  }).join('');
}

// ---- state from the server (or the export) -------------------------------------------
let version = -1, sceneVersion = -1;
window.fdcView = { ready: false, version: -1, setTime: (t) => { time = t; playing = false; draw(); },
                   camera: () => ({ left: camera.left, right: camera.right, top: camera.top,
                                    bottom: camera.bottom, target: orbit.target.toArray(),
                                    width: host.clientWidth, height: host.clientHeight }),
                   colours: () => Object.fromEntries(bodies.map((b) => [b.name, b.colour])),
                   road: () => roadRange,
                   mode: () => { const m = chosenMode(); return m ? { amplitude: modeAmplitude(m), period: MODE_PERIOD } : null; } };

async function apply(state) {
  $('status').textContent = `build: ${state.status}`;
  $('status').className = state.status;
  $('diagnostics').hidden = !state.diagnostics;
  $('diagnostics').textContent = state.diagnostics || '';
  if (state.scene && state.scene_version !== sceneVersion) {
    sceneVersion = state.scene_version;
    meshArrays = await fetchMeshes(state.scene, sceneVersion);
    buildScene(state.scene);
    buildModes = state.modes;
    listModes((shown && shown.modes) || buildModes);
  }
  for (const id of [...runs.keys()]) if (!state.runs.some((r) => r.id === id)) runs.delete(id);
}

function merge(info, part) {
  let r = runs.get(info.id);
  if (!r) { r = { id: info.id, set: info.set, channels: [], times: [], rows: [] }; runs.set(info.id, r); }
  if (part) {
    r.channels = part.channels;
    r.times.push(...part.times); r.rows.push(...part.rows);
  }
  const had = !!r.modes;
  Object.assign(r, { done: info.done, error: info.error, loads: info.loads || [], modes: info.modes || null });
  // A re-run's modes come once its linearization is done.
  if (had !== !!r.modes) r.modesFresh = true;
  return r;
}

function showNewest() {
  const all = [...runs.values()].filter((r) => r.channels.length);
  const newest = all[all.length - 1];
  if (!newest) return;
  const fresh = newest !== shown;
  shown = newest;
  // A run with the panel's values has its own modes.
  if (fresh || shown.modesFresh) listModes(shown.modes || buildModes);
  shown.modesFresh = false;
  $('time').max = shown.times.length ? shown.times[shown.times.length - 1] : 1;
  fillChannels(shown);
  // Framed again whenever rows came in (also the last ones, with `done`).
  if (fresh || shown.framedRows !== shown.times.length) {
    frame(shown);
    shown.framedRows = shown.times.length;
  }
  rebuildPlot(); listRuns(); draw();
}

async function poll() {
  try {
    const state = await (await fetch('/api/state')).json();
    if (state.version !== version) {
      await apply(state);
      for (const info of state.runs) {
        const have = runs.get(info.id);
        const from = have ? have.times.length : 0;
        if (have && have.done && from === info.rows) continue;
        const part = await (await fetch(`/api/run/${info.id}?from=${from}`)).json();
        merge(info, part);
      }
      showNewest();
      version = state.version;
      const settled = (state.status === 'ready' || state.status === 'failed') && state.runs.every((r) => r.done);
      window.fdcView.version = version;
      window.fdcView.ready = settled && !!shown;
      window.fdcView.state = { status: state.status, diagnostics: state.diagnostics,
                               runs: state.runs.length, scene: sceneVersion };
    }
  } catch (e) {
    $('status').textContent = `server unreachable (${e})`;
  }
  setTimeout(poll, 250);
}

placeCamera();
if (embedded) {
  await apply(embedded);
  for (const part of embedded.embedded) merge(embedded.runs.find((r) => r.id === part.id), part);
  showNewest();
  window.fdcView.ready = !!shown;
  window.fdcView.state = { status: embedded.status, runs: embedded.runs.length, scene: sceneVersion };
} else {
  poll();
}
